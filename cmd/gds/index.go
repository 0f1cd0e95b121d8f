package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/fleet"
	"gds/snapshots"
)

func init() {
	register("index", "build an index generation from a snapshot and make it live", runIndex)
}

// runIndex builds a generation the way gds serve does and makes it live
// by rewriting CURRENT atomically.
//
// Beside a running gds serve on the same data directory: the build goes to
// a directory of its own, so it does not touch what the server reads, but
// the server keeps serving the generation it has open until it restarts
// or reindexes itself (POST /admin/reindex); it does not watch CURRENT.
// A build directory left by a build that died (kill -9, power loss) is
// removed on opening, as gds serve does; one whose builder still holds the
// data directory's build lock is left alone, and gds index refuses to
// start beside it unless --force is given (then it waits its turn).
func runIndex(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "index", "--snapshot DIR|URL --data DIR [--full] [--json] [--force] [--publish URL]")
	snapshot := fs.String("snapshot", "", "snapshot directory, or bucket URL, to build from")
	data := fs.String("data", "", "data directory holding the index generations")
	full := fs.Bool("full", false, "rebuild every bleve index even if few records changed, and even if the snapshot is already live")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	force := fs.Bool("force", false, "when another process is building in --data, wait for it instead of refusing")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the build to this file (go tool pprof)")
	memProfile := fs.String("memprofile", "", "write a heap profile of the build at its largest heap to this file (go tool pprof)")
	gcPercent := fs.Int("gc-percent", indexer.DefaultBuildGCPercent, "Go's GOGC for the build: more memory, less collecting (100 is Go's default; a GOGC variable in the environment wins)")
	var batch int
	var bleveChars bool
	addBleveBatchFlag(fs, &batch, &bleveChars)
	keepSegments := fs.Bool("bleve-keep-segments", false, "leave each bleve shard with one segment per batch instead of merging it into one at the end of its build (a shorter build, slower analysts' prefix and wildcard queries)")
	keepRetired := fs.Bool("keep-retired", false, "leave the generation the build replaces on disk, for a gds serve still serving it, which removes it once it serves a newer one "+
		"(as does the next gds serve or gds index on --data; gds serve --build-process passes it)")
	var fc fleetConfig
	addPublishFlags(fs, &fc)
	var lc logConfig
	addLogFlags(fs, &lc)
	if err := parseOnlyFlags(env, fs, args); err != nil {
		return err
	}
	if err := checkBleveBatch(batch); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if err := requireFlags(fs, "snapshot", "data"); err != nil {
		return err
	}
	if err := fc.check(*snapshot, ""); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	bar := isTerminal(env.Stderr) && lc.Format != "json"
	if bar && lc.Level == "info" {
		lc.Level = "warn" // the bar tells the story; info lines would break it
	}
	log, err := newLogger(lc, env.Stderr)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if !*force {
		if running, err := indexer.BuildRunning(*data); err != nil {
			return fmt.Errorf("index: %w", err)
		} else if running {
			return fmt.Errorf("index: another process is building in %s (a gds serve?); wait for it, or use --force to build after it", *data)
		}
	}
	if env.Getenv("GOGC") == "" {
		defer indexer.TuneGC(*gcPercent, env.Getenv("GOMEMLIMIT") == "")()
	}
	fr, err := openPublisher(ctx, fc, log)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer fr.stop()
	mgr, err := indexer.Open(indexer.Options{DataDir: *data, Logger: log, BatchSize: batch, KeepSegments: *keepSegments, BleveCharacters: bleveChars,
		KeepRetired: *keepRetired, FetchSnapshot: fetchSnapshot(*data)})
	if err != nil {
		return fmt.Errorf("index: opening %s: %w", *data, err)
	}
	defer mgr.Close()
	if fr.pub != nil {
		mgr.ReserveIDs(fr.pub.Published())
	}
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer stopProfiles()

	done := make(chan buildOutcome, 1)
	go func() {
		res, err := mgr.Build(ctx, indexer.BuildRequest{Snapshot: *snapshot, Full: *full, Trigger: "cli"})
		done <- buildOutcome{res, err}
	}()
	watch := logWatch(mgr, log)
	if bar {
		watch = barWatch(env.Stderr)
	}
	out := watchBuild(done, mgr, watch)
	if out.err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("index: interrupted; nothing changed: %w", ctx.Err())
		}
		return fmt.Errorf("index: build from %s failed; the live generation is unchanged: %w", *snapshot, out.err)
	}
	var pub *fleet.PublishResult
	if fr.pub != nil {
		if pub, err = publishLive(ctx, mgr, fr.pub); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	return printBuild(env.Stdout, out.res, mgr.Live(), *asJSON, pub)
}

// publishLive publishes the generation live in mgr to the bucket.
func publishLive(ctx context.Context, mgr *indexer.Manager, p *fleet.Publisher) (*fleet.PublishResult, error) {
	g := mgr.Acquire()
	if g == nil {
		return nil, errors.New("nothing live to publish")
	}
	pub, err := p.Publish(ctx, g)
	g.Release()
	if err != nil {
		return nil, fmt.Errorf("generation %d is live here but publishing it failed; the bucket still points at %d: %w", pub.Generation, p.Published(), err)
	}
	return &pub, nil
}

// peakHeapProfile writes a heap profile to path whenever the heap has grown
// a tenth past the largest seen (checked every second), so path ends up
// holding the heap near its peak; stop ends it.
func peakHeapProfile(path string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var peak uint64
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse < peak+peak/10 {
				continue
			}
			peak = ms.HeapInuse
			if f, err := os.Create(path); err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// startProfiles starts the CPU profile into cpu and the peak heap profile
// into mem, each when its path is given; stop ends both.
func startProfiles(cpu, mem string) (stop func(), err error) {
	stopCPU, stopMem := func() {}, func() {}
	if cpu != "" {
		if stopCPU, err = startCPUProfile(cpu); err != nil {
			return nil, err
		}
	}
	if mem != "" {
		stopMem = peakHeapProfile(mem)
	}
	return func() { stopMem(); stopCPU() }, nil
}

// startCPUProfile profiles the process's CPU into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// buildOutcome is what Manager.Build returned.
type buildOutcome struct {
	res indexer.BuildResult
	err error
}

// buildWatch is how a build's progress reaches the operator: every tick,
// the line saying the generation became searchable (once) and the current
// progress; done is called when the build is over.
type buildWatch struct {
	every      time.Duration
	searchable func(line string)
	progress   func(p indexer.Progress, elapsed time.Duration)
	done       func()
}

// barWatch redraws a one-line progress bar on w.
func barWatch(w io.Writer) buildWatch {
	return buildWatch{
		every:      100 * time.Millisecond,
		searchable: func(line string) { fmt.Fprintf(w, "\r\033[K%s\n", line) },
		progress: func(p indexer.Progress, elapsed time.Duration) {
			fmt.Fprintf(w, "\r\033[K%s", progressLine(p, elapsed, 30))
		},
		done: func() { fmt.Fprint(w, "\r\033[K") },
	}
}

// progressMessage is the message of logWatch's progress lines (gds serve
// --build-process reads them from its child).
const progressMessage = "building"

// logWatch logs the progress every few seconds, for logs and CI where a
// redrawn bar would be noise.
func logWatch(mgr *indexer.Manager, log zerolog.Logger) buildWatch {
	return buildWatch{
		every: 2 * time.Second,
		searchable: func(line string) {
			log.Info().Uint64("generation", mgr.Parts().Search).Msg(line)
		},
		progress: func(p indexer.Progress, _ time.Duration) {
			log.Info().Str("phase", p.Phase).Str("kind", p.Kind).Int64("done", p.Done).Int64("total", p.Total).Msg(progressMessage)
		},
		done: func() {},
	}
}

// watchBuild reports the build's progress through bw until it is done.
func watchBuild(done <-chan buildOutcome, mgr *indexer.Manager, bw buildWatch) buildOutcome {
	t := time.NewTicker(bw.every)
	defer t.Stop()
	start, said := time.Now(), false
	for {
		select {
		case out := <-done:
			bw.done()
			return out
		case <-t.C:
			if line := searchableLine(mgr, start, &said); line != "" {
				bw.searchable(line)
			}
			if p, ok := mgr.Progress(); ok {
				bw.progress(p, time.Since(start))
			}
		}
	}
}

// buildPhases are the phases of a build in order, for the bar's "n/5":
// after switch the generation answers searches, and its analysts' bleve
// shards are built.
var buildPhases = []string{"verify", "read", "tables", "switch", "bleve"}

// searchableLine says, once, that the build's generation went live for
// searches while its bleve part is still being built.
func searchableLine(mgr *indexer.Manager, start time.Time, said *bool) string {
	p := mgr.Parts()
	if *said || p.Bleve != indexer.BleveBuilding || p.SearchableAt.Before(start) {
		return ""
	}
	*said = true
	return fmt.Sprintf("generation %d searchable after %v (tables and record stores live); building the analysts' indexes",
		p.Search, p.SearchableAt.Sub(start).Round(time.Millisecond))
}

// progressLine renders p as "[3/5] tables characters [=====>    ]  52% 12.3s".
func progressLine(p indexer.Progress, elapsed time.Duration, width int) string {
	step := 0
	for i, ph := range buildPhases {
		if ph == p.Phase {
			step = i + 1
		}
	}
	label := p.Phase
	if p.Kind != "" {
		label += " " + p.Kind
	}
	bar, pct := strings.Repeat(" ", width), "    "
	if p.Total > 0 {
		done := min(p.Done, p.Total)
		n := int(done * int64(width) / p.Total)
		bar = strings.Repeat("=", n) + strings.Repeat(" ", width-n)
		if n > 0 && n < width {
			bar = bar[:n-1] + ">" + bar[n:]
		}
		pct = fmt.Sprintf("%3d%%", done*100/p.Total)
	}
	return fmt.Sprintf("[%d/%d] %-24s [%s] %s %5.1fs", step, len(buildPhases), label, bar, pct, elapsed.Seconds())
}

// printBuild reports a finished build on w.
func printBuild(w io.Writer, res indexer.BuildResult, live *indexer.Meta, asJSON bool, pub *fleet.PublishResult) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Build   indexer.BuildResult  `json:"build"`
			Live    *indexer.Meta        `json:"live"`
			Publish *fleet.PublishResult `json:"publish,omitempty"`
		}{res, live, pub})
	}
	if pub != nil {
		defer printPublish(w, *pub)
	}
	d := time.Duration(res.Duration).Round(time.Millisecond)
	if res.Searchable > 0 {
		defer fmt.Fprintf(w, "searchable after %v; analysts' indexes complete after %v\n", time.Duration(res.Searchable).Round(time.Millisecond), d)
	}
	switch {
	case res.Unchanged && live != nil:
		fmt.Fprintf(w, "snapshot %s is already live as generation %d; nothing built (--full rebuilds anyway)\n", res.Snapshot, live.ID)
		return nil
	case res.Incremental:
		fmt.Fprintf(w, "generation %d live: built from %s in %v, incremental (%d records changed)\n", res.Generation, res.Snapshot, d, res.Changed)
	default:
		fmt.Fprintf(w, "generation %d live: built from %s in %v, full\n", res.Generation, res.Snapshot, d)
	}
	if live == nil {
		return nil
	}
	for _, cat := range snapshots.Categories {
		if n, ok := live.Counts[cat]; ok {
			fmt.Fprintf(w, "  %-15s %10d\n", cat, n)
		}
	}
	fmt.Fprintln(w, "A gds serve already running on this data directory keeps its generation until it restarts or reindexes.")
	return nil
}

// printPublish reports what a publish uploaded.
func printPublish(w io.Writer, p fleet.PublishResult) {
	if p.Unchanged {
		fmt.Fprintf(w, "generation %d is already published\n", p.Generation)
		return
	}
	fmt.Fprintf(w, "generation %d published in %v: %d files, %d bytes; uploaded %d objects, %d bytes; deleted %d old generations, %d objects\n",
		p.Generation, time.Duration(p.Duration).Round(time.Millisecond), p.Files, p.Bytes, p.Uploaded, p.UploadedBytes, p.DeletedGenerations, p.DeletedObjects)
}
