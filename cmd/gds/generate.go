package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"gds/snapshots"
	"gds/snapshots/synth"
)

func init() {
	register("generate", "generate deterministic synthetic players into a snapshot", runGenerate)
}

func runGenerate(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "generate", "[--from DIR] --characters N --corporations N --alliances N --structures N --seed S --out DIR")
	var (
		cfg     synth.Config
		from    = fs.String("from", "", "base snapshot to copy (an imported SDE); the players are added to it")
		out     = fs.String("out", "", "snapshot directory to write (replaced if it exists)")
		created = fs.String("created", "", "creation time of the snapshot, RFC 3339 (default: fixed by --seed)")
	)
	fs.Int64Var(&cfg.Characters, "characters", 1000, "number of characters")
	fs.Int64Var(&cfg.Corporations, "corporations", 100, "number of player corporations")
	fs.Int64Var(&cfg.Alliances, "alliances", 10, "number of alliances")
	fs.Int64Var(&cfg.Structures, "structures", 200, "number of structures")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed: the same flags give the same snapshot")
	fs.BoolVar(&cfg.Gzip, "gzip", true, "write gzip-compressed files")
	fs.BoolVar(&cfg.Zstd, "zstd", false, "write zstd-compressed .jsonl.zst files (faster to read than gzip; wins over --gzip)")
	positional, err := parseFlags(env, fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		fmt.Fprintf(env.Stderr, "gds generate: unexpected argument %q\n", positional[0])
		return errUsage
	}
	if *out == "" {
		fmt.Fprintln(env.Stderr, "gds generate: --out is required")
		return errUsage
	}
	if *created != "" {
		if cfg.Created, err = time.Parse(time.RFC3339, *created); err != nil {
			return fmt.Errorf("--created: %w", err)
		}
	}
	if *from != "" {
		if cfg.Base, err = snapshots.Open(*from); err != nil {
			return fmt.Errorf("--from: %w", err)
		}
	}
	finish := func() {}
	if isTerminal(env.Stderr) {
		cfg.Progress, finish = progress(env.Stderr)
	}
	start := time.Now()
	snap, err := synth.Generate(ctx, *out, cfg)
	finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s in %s\n", snap.Dir, time.Since(start).Round(time.Millisecond))
	for _, k := range snapshots.Kinds {
		if snap.Has(k) {
			fmt.Fprintf(env.Stdout, "  %-15s %10d\n", k, snap.Count(k))
		}
	}
	return nil
}

// progress returns a callback that redraws one status line at most a few
// times a second, and a function that ends the line.
func progress(w io.Writer) (func(k snapshots.Kind, done, total int64), func()) {
	var last time.Time
	drawn := false
	report := func(k snapshots.Kind, done, total int64) {
		if now := time.Now(); now.Sub(last) >= 200*time.Millisecond || done == total {
			last = now
			drawn = true
			if total > 0 {
				fmt.Fprintf(w, "\r\033[K%-15s %d/%d (%.0f%%)", k, done, total, 100*float64(done)/float64(total))
			} else {
				fmt.Fprintf(w, "\r\033[K%-15s %d", k, done)
			}
		}
	}
	return report, func() {
		if drawn {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}
