// Command release builds gds's release archives (make release): static
// binaries per platform from a clean clone of HEAD, each in a .tar.gz with
// the README, the docs, the deployment examples and the licenses of the
// modules linked in, and a SHA256SUMS file. Two runs from the same commit
// give the same bytes: -trimpath, no build ID, the commit's time on every
// archive entry, entries sorted, owners zeroed, gzip without a timestamp.
//
//	go run ./cmd/release dist   -out dist -version v1.2.3 -platforms linux/amd64,linux/arm64
//	go run ./cmd/release tar    -out x.tar -mtime EPOCH DIR   (the OCI layout make image saves)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: release dist|tar [flags]")
	}
	switch args[0] {
	case "dist":
		return runDist(ctx, args[1:], stdout, stderr)
	case "tar":
		return runTar(args[1:], stderr)
	}
	return fmt.Errorf("unknown command %q (dist, tar)", args[0])
}

// runTar writes a directory as a plain tar, as reproducibly as the
// release archives: make image saves the OCI layout with it.
func runTar(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("tar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the tar file to write")
	mtime := fs.Int64("mtime", 0, "Unix time of every entry (SOURCE_DATE_EPOCH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() != 1 {
		return errors.New("usage: release tar -out FILE [-mtime EPOCH] DIR")
	}
	entries, err := dirEntries(fs.Arg(0), "", false)
	if err != nil {
		return err
	}
	return writeArchive(*out, entries, time.Unix(*mtime, 0), false)
}

// sourceDateEpoch is SOURCE_DATE_EPOCH when set, else def.
func sourceDateEpoch(def string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		s = def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: not a Unix time", s)
	}
	return time.Unix(n, 0).UTC(), nil
}
