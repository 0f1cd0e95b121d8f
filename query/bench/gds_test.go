//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/query"
	"gds/snapshots"
)

// The gds side runs in child processes (this test binary re-executed with
// GDS_BENCH_HELPER set) so that build and serving memory are measured on
// their own, not mixed with the harness and the PostgreSQL client.
const helperEnv = "GDS_BENCH_HELPER"

// helperArgs is what a child process is told, as JSON in GDS_BENCH_ARGS.
type helperArgs struct {
	Data     string `json:"data"`
	Snapshot string `json:"snapshot,omitempty"`
	// Search:
	Queries    string        `json:"queries,omitempty"` // JSON file of []Query
	MinTime    time.Duration `json:"min_time,omitempty"`
	MaxPasses  int           `json:"max_passes,omitempty"`
	CPUProfile string        `json:"cpu_profile,omitempty"`
	Out        string        `json:"out"`
}

// buildOut is what a build child reports.
type buildOut struct {
	Duration    time.Duration `json:"duration"`
	Incremental bool          `json:"incremental"`
	Changed     int           `json:"changed"`
	Generation  string        `json:"generation"`
	MaxRSS      int64         `json:"max_rss"` // filled by the parent
}

// Mismatch is a query whose hit counts differ.
type Mismatch struct {
	Query Query `json:"query"`
	Got   int   `json:"got"`
}

// searchOut is what a search child reports.
type searchOut struct {
	Mismatches     []Mismatch        `json:"mismatches"`
	Contains1      Timing            `json:"contains1"`
	Contains2      Timing            `json:"contains2"`
	Strict1        Timing            `json:"strict1"`
	Strict2        Timing            `json:"strict2"`
	AllocsPerQ     float64           `json:"allocs_per_query"`
	BytesPerQ      float64           `json:"bytes_per_query"`
	CandidatesPerQ float64           `json:"candidates_per_query"`
	VerifiedPerQ   float64           `json:"verified_per_query"`
	OpenTime       time.Duration     `json:"open_time"`
	RSSAfterOpen   int64             `json:"rss_after_open"` // bytes
	HWM            int64             `json:"hwm"`            // bytes, VmHWM at the end
	MaxRSS         int64             `json:"max_rss"`        // filled by the parent
	ByClass        map[string]Timing `json:"by_class"`
	Slowest        []slowQuery       `json:"slowest"`
}

// slowQuery is one of the slowest gds queries of the per-class pass.
type slowQuery struct {
	Query      Query         `json:"query"`
	Took       time.Duration `json:"took"`
	Candidates int           `json:"candidates"`
	Verified   int           `json:"verified"`
	Hits       int           `json:"hits"`
}

// TestBenchHelper is the child side; it does nothing unless re-executed by
// TestBench.
func TestBenchHelper(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("only run as a child of TestBench")
	}
	var args helperArgs
	if err := json.Unmarshal([]byte(os.Getenv("GDS_BENCH_ARGS")), &args); err != nil {
		t.Fatal(err)
	}
	var out any
	var err error
	switch role {
	case "build":
		out, err = helperBuild(args)
	case "search":
		out, err = helperSearch(args)
	default:
		err = fmt.Errorf("unknown helper role %q", role)
	}
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.MarshalIndent(out, "", "  ")
	if err := os.WriteFile(args.Out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openManager(data string) (*indexer.Manager, error) {
	return indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard)})
}

func helperBuild(a helperArgs) (buildOut, error) {
	m, err := openManager(a.Data)
	if err != nil {
		return buildOut{}, err
	}
	defer m.Close()
	start := time.Now()
	res, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: a.Snapshot, Trigger: "cli"})
	if err != nil {
		return buildOut{}, err
	}
	d := time.Since(start)
	g := m.Acquire()
	defer g.Release()
	return buildOut{Duration: d, Incremental: res.Incremental, Changed: res.Changed, Generation: g.Dir()}, nil
}

func helperSearch(a helperArgs) (*searchOut, error) {
	raw, err := os.ReadFile(a.Queries)
	if err != nil {
		return nil, err
	}
	var qs []Query
	if err := json.Unmarshal(raw, &qs); err != nil {
		return nil, err
	}
	t0 := time.Now()
	m, err := openManager(a.Data)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	s := query.New(m)
	out := &searchOut{OpenTime: time.Since(t0), RSSAfterOpen: procStatus(os.Getpid(), "VmRSS") * 1024}
	ctx := context.Background()
	cats := []snapshots.Category{snapshots.CategoryCharacter}
	search := func(q Query) (query.Result, error) {
		return s.Search(ctx, query.Request{Text: q.Text, Strict: q.Strict, Categories: cats})
	}
	// Same hit counts first; nothing is timed when they differ.
	var stats query.Stats
	for _, q := range qs {
		res, err := search(q)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", q.Text, err)
		}
		if got := len(res.IDs[snapshots.CategoryCharacter]); got != q.Want {
			out.Mismatches = append(out.Mismatches, Mismatch{Query: q, Got: got})
		}
		if !q.Strict {
			stats.Candidates += res.Stats.Candidates
			stats.Verified += res.Stats.Verified
		}
	}
	if len(out.Mismatches) > 0 {
		return out, nil
	}
	contains, strict := split(qs)
	out.CandidatesPerQ = float64(stats.Candidates) / float64(max(1, len(contains)))
	out.VerifiedPerQ = float64(stats.Verified) / float64(max(1, len(contains)))
	run := func(idx []int, clients int, profile string) Timing {
		if profile != "" {
			f, err := os.Create(profile)
			if err == nil {
				pprof.StartCPUProfile(f)
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
		return runTimed(len(idx), clients, a.MinTime, a.MaxPasses, func(_, i int) error {
			_, err := search(qs[idx[i]])
			return err
		})
	}
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	out.Contains1 = run(contains, 1, a.CPUProfile)
	runtime.ReadMemStats(&ms1)
	out.AllocsPerQ = float64(ms1.Mallocs-ms0.Mallocs) / float64(max(1, out.Contains1.Queries))
	out.BytesPerQ = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(max(1, out.Contains1.Queries))
	out.Contains2 = run(contains, 2, "")
	out.Strict1 = run(strict, 1, "")
	out.Strict2 = run(strict, 2, "")
	// Per query class, one client, one pass: where the tail comes from.
	out.ByClass = map[string]Timing{}
	byClass := map[string][]int{}
	for i, q := range qs {
		byClass[q.Class] = append(byClass[q.Class], i)
	}
	var slow []slowQuery
	for class, idx := range byClass {
		out.ByClass[class] = runTimed(len(idx), 1, 0, 1, func(_, i int) error {
			t0 := time.Now()
			res, err := search(qs[idx[i]])
			slow = append(slow, slowQuery{Query: qs[idx[i]], Took: time.Since(t0), Candidates: res.Stats.Candidates,
				Verified: res.Stats.Verified, Hits: len(res.IDs[snapshots.CategoryCharacter])})
			return err
		})
	}
	slices.SortFunc(slow, func(a, b slowQuery) int { return int(b.Took - a.Took) })
	out.Slowest = slow[:min(len(slow), 15)]
	out.HWM = procStatus(os.Getpid(), "VmHWM") * 1024
	return out, nil
}

// runHelper re-executes the test binary as a child in role, waits for it
// and decodes its report into out; it returns the child's peak RSS.
func runHelper(t *testing.T, role string, a helperArgs, out any) int64 {
	t.Helper()
	raw, _ := json.Marshal(a)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchHelper$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GDS_BENCH_ARGS="+string(raw))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gds %s child: %v", role, err)
	}
	body, err := os.ReadFile(a.Out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}

func statIno(info os.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return 0, false
	}
	return st.Ino, true
}

// gdsSizes breaks a generation's disk size down.
func gdsSizes(gen string) (total, character, tables, bleve, records int64) {
	total = dirSize(gen)
	character = dirSize(filepath.Join(gen, string(snapshots.CategoryCharacter)))
	records = dirSize(filepath.Join(gen, "records"))
	matches, _ := filepath.Glob(filepath.Join(gen, "*", "*.tbl"))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil {
			tables += st.Size()
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(gen, "*", "bleve-*"))
	for _, d := range dirs {
		bleve += dirSize(d)
	}
	return
}
