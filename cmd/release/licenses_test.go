package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLicenseNotes gathers the notes of a real binary (this test's own,
// which links the modules the release tool imports, the standard library
// only) and of real modules from the module cache: Go's BSD license is
// classified and quoted in full, MIT and Apache texts of gds's
// dependencies are recognized, and a module without a license file is
// refused rather than left out.
func TestLicenseNotes(t *testing.T) {
	ctx := context.Background()
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	goroot, err := output(ctx, "", nil, goCmd, "env", "GOROOT")
	if err != nil {
		t.Fatal(err)
	}
	list, err := output(ctx, ".", []string{"GOFLAGS=-mod=readonly"}, goCmd, "list", "-m", "-json", "github.com/gin-gonic/gin", "gocloud.dev")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := moduleDirs([]byte(list))
	if err != nil {
		t.Fatal(err)
	}
	var mods []module
	for pv, dir := range dirs {
		path, version, _ := strings.Cut(pv, "@")
		mods = append(mods, module{Path: path, Version: version, Dir: dir})
	}
	if len(mods) != 2 {
		t.Fatalf("modules %v", dirs)
	}
	var notes bytes.Buffer
	if err := licenseNotes(&notes, "v1", "linux/amd64", runtime.Version(), goroot, mods); err != nil {
		t.Fatal(err)
	}
	goLicense, err := os.ReadFile(filepath.Join(goroot, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| Go (standard library and runtime) | " + runtime.Version() + " | BSD-3-Clause |",
		"| github.com/gin-gonic/gin | ", " | MIT |",
		"| gocloud.dev | ", " | Apache-2.0 |",
		string(bytes.TrimRight(goLicense, "\n")),
	} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("notes lack %q:\n%.2000s", want, notes.String())
		}
	}

	bare := module{Path: "example.net/unlicensed", Version: "v0.1.0", Dir: t.TempDir()}
	err = licenseNotes(&bytes.Buffer{}, "v1", "linux/amd64", runtime.Version(), goroot, []module{bare})
	if err == nil || !strings.Contains(err.Error(), "example.net/unlicensed") {
		t.Errorf("a module without a license file: %v", err)
	}

	// The modules a built binary links, from its build information.
	bin := filepath.Join(t.TempDir(), "release")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	linked, goVersion, err := linkedModules(bin, map[string]string{})
	if err != nil || goVersion != runtime.Version() || len(linked) != 0 {
		t.Errorf("linkedModules of the release tool = %v, %q, %v; want none (standard library only)", linked, goVersion, err)
	}
}
