package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// distOptions are the flags of `release dist`.
type distOptions struct {
	src, rev, out, version, platforms string
	goCmd                             string
}

// runDist builds every platform's archive from a clean clone of a commit
// of the source (so the build has a .git directory Go stamps the revision
// from, whatever the checkout, and no uncommitted change), then writes
// SHA256SUMS.
func runDist(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o distOptions
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.src, "src", ".", "the repository to release a commit of")
	fs.StringVar(&o.rev, "rev", "HEAD", "the commit to release")
	fs.StringVar(&o.out, "out", "dist", "directory for the archives and SHA256SUMS")
	fs.StringVar(&o.version, "version", "", "release version (default: git describe --tags --always of the commit)")
	fs.StringVar(&o.platforms, "platforms", "linux/amd64,linux/arm64,darwin/arm64", "GOOS/GOARCH pairs to build")
	fs.StringVar(&o.goCmd, "go", "go", "the go command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "gds-release-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	rev, err := cloneAt(ctx, o.src, o.rev, src, stderr)
	if err != nil {
		return err
	}
	if o.version == "" {
		if o.version, err = output(ctx, src, nil, "git", "describe", "--tags", "--always"); err != nil {
			return err
		}
	}
	commitTime, err := output(ctx, src, nil, "git", "log", "-1", "--format=%ct")
	if err != nil {
		return err
	}
	epoch, err := sourceDateEpoch(commitTime)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "release %s: revision %s, files dated %s\n", o.version, rev, epoch.Format(time.RFC3339))
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var archives []string
	for _, p := range strings.Split(o.platforms, ",") {
		name, err := buildArchive(ctx, o, src, tmp, strings.TrimSpace(p), epoch)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		archives = append(archives, name)
		fmt.Fprintf(stdout, "  %s\n", filepath.Join(o.out, name))
	}
	return writeSums(o.out, archives)
}

// cloneAt clones src's repository into dst at the commit at names and
// returns it; uncommitted changes in src are not part of it, and it says so.
func cloneAt(ctx context.Context, src, at, dst string, stderr io.Writer) (string, error) {
	rev, err := output(ctx, src, nil, "git", "rev-parse", "--verify", at+"^{commit}")
	if err != nil {
		return "", err
	}
	if dirty, err := output(ctx, src, nil, "git", "status", "--porcelain", "--untracked-files=no"); err != nil {
		return "", err
	} else if dirty != "" {
		fmt.Fprintf(stderr, "release: uncommitted changes in %s are not in the release (it builds %.12s)\n", src, rev)
	}
	if _, err := output(ctx, "", nil, "git", "clone", "--quiet", "--no-checkout", src, dst); err != nil {
		return "", err
	}
	if _, err := output(ctx, dst, nil, "git", "checkout", "--quiet", "--detach", rev); err != nil {
		return "", err
	}
	return rev, nil
}

// buildArchive builds gds for one GOOS/GOARCH and writes its archive,
// returning the archive's name.
func buildArchive(ctx context.Context, o distOptions, src, tmp, platform string, epoch time.Time) (string, error) {
	goos, goarch, ok := strings.Cut(platform, "/")
	if !ok {
		return "", errors.New("want GOOS/GOARCH")
	}
	base := fmt.Sprintf("gds-%s.%s-%s", o.version, goos, goarch)
	bin := filepath.Join(tmp, base, "gds")
	env := []string{"CGO_ENABLED=0", "GOOS=" + goos, "GOARCH=" + goarch, "GOFLAGS=-mod=readonly"}
	ldflags := "-s -w -buildid= -X main.version=" + o.version
	if _, err := output(ctx, src, env, o.goCmd, "build", "-trimpath", "-buildvcs=true", "-ldflags", ldflags, "-o", bin, "./cmd/gds"); err != nil {
		return "", err
	}
	notes, err := licensesOf(ctx, o.goCmd, src, bin, o.version, platform)
	if err != nil {
		return "", fmt.Errorf("license notes: %w", err)
	}
	es := []entry{
		{name: base + "/gds", src: bin, exec: true},
		{name: base + "/README.md", src: filepath.Join(src, "README.md")},
		{name: base + "/THIRD_PARTY_LICENSES.md", data: notes},
	}
	for _, dir := range []string{"docs", "deploy"} {
		more, err := dirEntries(filepath.Join(src, dir), base+"/"+dir, false)
		if err != nil {
			return "", err
		}
		es = append(es, more...)
	}
	return base + ".tar.gz", writeArchive(filepath.Join(o.out, base+".tar.gz"), es, epoch, true)
}

// licensesOf writes the license notes of the modules bin links.
func licensesOf(ctx context.Context, goCmd, src, bin, version, platform string) ([]byte, error) {
	list, err := output(ctx, src, []string{"GOFLAGS=-mod=readonly"}, goCmd, "list", "-m", "-json", "all")
	if err != nil {
		return nil, err
	}
	dirs, err := moduleDirs([]byte(list))
	if err != nil {
		return nil, err
	}
	goroot, err := output(ctx, src, nil, goCmd, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	mods, goVersion, err := linkedModules(bin, dirs)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = licenseNotes(&b, version, platform, goVersion, goroot, mods)
	return b.Bytes(), err
}

// writeSums writes SHA256SUMS for the archives, in sha256sum's format.
func writeSums(dir string, names []string) error {
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// output runs a command in dir with env added to the process's and
// returns its standard output, trimmed; a failure carries its stderr.
func output(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}
