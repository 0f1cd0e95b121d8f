//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
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
	// Build: GOGC, as gds index --gc-percent.
	GCPercent int `json:"gc_percent,omitempty"`
	// Search:
	Queries    string        `json:"queries,omitempty"` // JSON file of []Query
	MinTime    time.Duration `json:"min_time,omitempty"`
	MaxPasses  int           `json:"max_passes,omitempty"`
	CPUProfile string        `json:"cpu_profile,omitempty"`
	Results    string        `json:"results,omitempty"` // file of every query's IDs: written when missing, else compared
	Texts      []string      `json:"texts,omitempty"`   // role texts: contains texts timed one by one
	Answers    string        `json:"answers,omitempty"` // role ceiling: JSON file of the answers to serve
	Out        string        `json:"out"`
}

// buildOut is what a build child reports.
type buildOut struct {
	Duration    time.Duration `json:"duration"`
	Incremental bool          `json:"incremental"`
	Changed     int           `json:"changed"`
	Generation  string        `json:"generation"`
	MaxRSS      int64         `json:"max_rss"`   // filled by the parent
	PeakAnon    int64         `json:"peak_anon"` // filled by the parent: anonymous memory, without mapped files
	CPU         time.Duration `json:"cpu"`       // filled by the parent: user and system time of the child
	// Searchable: from the start until a search answered, watched from
	// outside the build (a searcher on the same manager asking every
	// 50 ms); 0 when a generation was live before the build.
	Searchable time.Duration `json:"searchable"`
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
	StepsPerQ      float64           `json:"steps_per_query"`
	ResultsNote    string            `json:"results_note,omitempty"`
	OpenTime       time.Duration     `json:"open_time"`
	RSSAfterOpen   int64             `json:"rss_after_open"` // bytes
	HWM            int64             `json:"hwm"`            // bytes, VmHWM before LookupOther
	MaxRSS         int64             `json:"max_rss"`        // filled by the parent: HWM
	ByClass        map[string]Timing `json:"by_class"`
	// ContainsMin: each contains query's fastest of minPasses one-client
	// passes, so that what another process did to a pass matters less.
	ContainsMin Timing      `json:"contains_min"`
	Slowest     []slowQuery `json:"slowest"`
	// Lookup: record-store lookups of characters through query.View.Raw,
	// each timed on its own (the record as the snapshot had it), on the
	// generation opened as gds serve opens it by default; LookupHeld says
	// whether that held its record stores in memory (--stores-in-memory).
	Lookup     Timing `json:"lookup"`
	LookupHeld bool   `json:"lookup_held"`
	// LookupOther: the same lookups on the generation opened again with
	// its record stores the other way (mapped when the default held them,
	// else held), after HWM.
	LookupOther Timing `json:"lookup_other"`
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
	case "texts":
		out, err = helperTexts(args)
	case "ceiling": // serves until stopped; its address is its output
		if err := helperCeiling(args); err != nil {
			t.Fatal(err)
		}
		return
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

// openServing opens data as gds serve does by default: name tables, record
// stores and typo indexes read into memory while they fit its share of
// the memory (--tables-in-memory auto, --stores-in-memory auto).
func openServing(data string) (*indexer.Manager, error) {
	return indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard), TablesInMemoryAuto: true, StoresInMemoryAuto: true})
}

func helperBuild(a helperArgs) (buildOut, error) {
	m, err := openManager(a.Data)
	if err != nil {
		return buildOut{}, err
	}
	defer m.Close()
	if a.GCPercent > 0 && os.Getenv("GOGC") == "" { // build as gds index does
		defer indexer.TuneGC(a.GCPercent, os.Getenv("GOMEMLIMIT") == "")()
	}
	start := time.Now()
	searchable := make(chan time.Duration, 1)
	stop := make(chan struct{})
	if g := m.Acquire(); g != nil {
		g.Release()
		searchable <- 0
	} else {
		go watchSearchable(m, start, searchable, stop)
	}
	res, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: a.Snapshot, Trigger: "cli"})
	close(stop)
	if err != nil {
		return buildOut{}, err
	}
	d := time.Since(start)
	g := m.Acquire()
	defer g.Release()
	out := buildOut{Duration: d, Incremental: res.Incremental, Changed: res.Changed, Generation: g.Dir()}
	if tts := <-searchable; tts > 0 {
		out.Searchable = min(tts, d)
	} else if res.Searchable > 0 {
		// A build over a live generation: searches answered from the old
		// one until the new went live, which the manager records.
		out.Searchable = min(time.Duration(res.Searchable), d)
	}
	return out, nil
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
	m, err := openServing(a.Data)
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
	results := make([][]int64, len(qs))
	for i, q := range qs {
		res, err := search(q)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", q.Text, err)
		}
		results[i] = res.IDs[snapshots.CategoryCharacter]
		if got := len(res.IDs[snapshots.CategoryCharacter]); got != q.Want {
			out.Mismatches = append(out.Mismatches, Mismatch{Query: q, Got: got})
		}
		if !q.Strict {
			stats.Candidates += res.Stats.Candidates
			stats.Verified += res.Stats.Verified
			stats.Steps += res.Stats.Steps
		}
	}
	if len(out.Mismatches) > 0 {
		return out, nil
	}
	if a.Results != "" {
		note, err := checkResults(a.Results, qs, results)
		if err != nil {
			return nil, err
		}
		out.ResultsNote = note
	}
	contains, strict := split(qs)
	out.CandidatesPerQ = float64(stats.Candidates) / float64(max(1, len(contains)))
	out.VerifiedPerQ = float64(stats.Verified) / float64(max(1, len(contains)))
	out.StepsPerQ = float64(stats.Steps) / float64(max(1, len(contains)))
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
	mins := make([]time.Duration, len(contains))
	for pass := 0; pass < minPasses; pass++ {
		for i, qi := range contains {
			t0 := time.Now()
			if _, err := search(qs[qi]); err != nil {
				return nil, err
			}
			if d := time.Since(t0); pass == 0 || d < mins[i] {
				mins[i] = d
			}
		}
	}
	out.ContainsMin = summarize(mins, 0, 0)
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
	if out.Lookup, err = timeLookups(s, results); err != nil {
		return nil, err
	}
	out.LookupHeld = m.Status().StoresHeld
	out.HWM = procStatus(os.Getpid(), "VmHWM") * 1024
	if out.LookupOther, err = timeLookupsOpened(a.Data, !out.LookupHeld, results); err != nil {
		return nil, err
	}
	return out, nil
}

// watchSearchable sends the time from start until a character search on m
// answers (or the full time if the build ends first: stop closed).
func watchSearchable(m *indexer.Manager, start time.Time, out chan<- time.Duration, stop <-chan struct{}) {
	s := query.New(m)
	req := query.Request{Text: "abc", Categories: []snapshots.Category{snapshots.CategoryCharacter}}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := s.Search(context.Background(), req); err == nil {
			out <- time.Since(start)
			return
		}
		select {
		case <-stop:
			out <- time.Since(start)
			return
		case <-tick.C:
		}
	}
}

// minPasses is how many passes ContainsMin takes the fastest of.
const minPasses = 5

// runHelper re-executes the test binary as a child in role, waits for it
// and decodes its report into out; it returns the child's peak RSS.
func runHelper(t *testing.T, role string, a helperArgs, out any) int64 {
	t.Helper()
	u := runHelperMem(t, role, a, out)
	return u.MaxRSS
}

// childUsage is what a child process used: its peak RSS, its peak
// anonymous memory (RssAnon, sampled every 100 ms: its RSS also counts the
// pages of the generation's files it has mapped, which the kernel can
// drop) and its CPU time (user and system).
type childUsage struct {
	MaxRSS, PeakAnon int64
	CPU              time.Duration
}

// runHelperMem is runHelper that returns all of the child's usage.
func runHelperMem(t *testing.T, role string, a helperArgs, out any) (u childUsage) {
	t.Helper()
	raw, _ := json.Marshal(a)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchHelper$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GDS_BENCH_ARGS="+string(raw))

	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("gds %s child: %v", role, err)
	}
	done := make(chan struct{})
	sampled := make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, procStatus(cmd.Process.Pid, "RssAnon")*1024)
			select {
			case <-done:
				sampled <- peak
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	u.PeakAnon = <-sampled
	if err != nil {
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
		u.MaxRSS = ru.Maxrss * 1024
	}
	u.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return u
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

// checkResults writes every query's result IDs to file when it does not
// exist, and otherwise fails unless every result equals the recorded one.
func checkResults(file string, qs []Query, results [][]int64) (string, error) {
	type rec struct {
		Text   string  `json:"text"`
		Strict bool    `json:"strict"`
		IDs    []int64 `json:"ids"`
	}
	raw, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		recs := make([]rec, len(qs))
		for i, q := range qs {
			recs[i] = rec{Text: q.Text, Strict: q.Strict, IDs: results[i]}
		}
		raw, _ := json.Marshal(recs)
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			return "", err
		}
		return fmt.Sprintf("results of %d queries recorded in %s", len(qs), file), nil
	}
	if err != nil {
		return "", err
	}
	var recs []rec
	if err := json.Unmarshal(raw, &recs); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if len(recs) != len(qs) {
		return "", fmt.Errorf("%s holds %d queries, the query set %d", file, len(recs), len(qs))
	}
	for i, q := range qs {
		if recs[i].Text != q.Text || recs[i].Strict != q.Strict {
			return "", fmt.Errorf("%s: query %d is %q, the query set's %q", file, i, recs[i].Text, q.Text)
		}
		if !slices.Equal(recs[i].IDs, results[i]) {
			return "", fmt.Errorf("%q (strict %v): results differ from %s (%d IDs, recorded %d)", q.Text, q.Strict, file, len(results[i]), len(recs[i].IDs))
		}
	}
	return fmt.Sprintf("results of all %d queries equal those in %s", len(qs), file), nil
}

// textTiming is the work and latency of one text timed on its own.
type textTiming struct {
	Text   string        `json:"text"`
	Stats  query.Stats   `json:"stats"`
	Hits   int           `json:"hits"`
	Runs   int           `json:"runs"`
	Median time.Duration `json:"median"`
	Min    time.Duration `json:"min"`
}

// helperTexts times each of a.Texts (contains) repeatedly on its own.
func helperTexts(a helperArgs) ([]textTiming, error) {
	m, err := openManager(a.Data)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	s := query.New(m)
	ctx := context.Background()
	cats := []snapshots.Category{snapshots.CategoryCharacter}
	var out []textTiming
	for _, text := range a.Texts {
		req := query.Request{Text: text, Categories: cats}
		res, err := s.Search(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", text, err)
		}
		tt := textTiming{Text: text, Stats: res.Stats, Hits: len(res.IDs[snapshots.CategoryCharacter])}
		var lat []time.Duration
		start := time.Now()
		for len(lat) < 5 || (time.Since(start) < a.MinTime && len(lat) < 100_000) {
			t0 := time.Now()
			if _, err := s.Search(ctx, req); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		tt.Runs, tt.Median, tt.Min = len(lat), lat[len(lat)/2], lat[0]
		out = append(out, tt)
	}
	return out, nil
}

// gdsOnly runs only the gds in-process search scenarios (or, with
// -gds-texts, times single texts) on the data directory and query set a
// previous full run left in -work.
func gdsOnly(t *testing.T) {
	work := *flagWork
	if work == "" {
		t.Fatal("-gds-only needs -work with data/ and queries.json from a full run")
	}
	work, _ = filepath.Abs(work)
	data, qfile := filepath.Join(work, "data"), filepath.Join(work, "queries.json")
	if *flagGDSTexts != "" {
		var tts []textTiming
		runHelper(t, "texts", helperArgs{Data: data, Texts: strings.Split(*flagGDSTexts, ","), MinTime: *flagMinTime,
			Out: filepath.Join(work, "texts.json")}, &tts)
		for _, tt := range tts {
			fmt.Printf("%-24q median %8s ms  min %8s ms  (%d runs)  hits %3d candidates %6d verified %6d steps %6d\n",
				tt.Text, ms(tt.Median), ms(tt.Min), tt.Runs, tt.Hits, tt.Stats.Candidates, tt.Stats.Verified, tt.Stats.Steps)
		}
		return
	}
	var gs searchOut
	runSearch(t, helperArgs{Data: data, Queries: qfile, MinTime: *flagMinTime,
		MaxPasses: *flagMaxPasses, CPUProfile: *flagCPUProfile, Results: *flagGDSResults, Out: filepath.Join(work, "search-gds-only.json")}, &gs)
	if len(gs.Mismatches) > 0 {
		for _, m := range gs.Mismatches {
			t.Errorf("hit count differs for %q (strict %v): gds %d, want %d", m.Query.Text, m.Query.Strict, m.Got, m.Query.Want)
		}
		t.FailNow()
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n== gds in-process only (%s), GOMAXPROCS %d\n", data, runtime.GOMAXPROCS(0))
	if gs.ResultsNote != "" {
		p("   %s\n", gs.ResultsNote)
	}
	p("%-9s %-2s | %8s %8s %8s %8s %10s\n", "mode", "cl", "p50 ms", "p95 ms", "p99 ms", "max ms", "q/s")
	for _, r := range []struct {
		k string
		t Timing
	}{{"contains1", gs.Contains1}, {"contains2", gs.Contains2}, {"strict1", gs.Strict1}, {"strict2", gs.Strict2}} {
		p("%-9s %-2s | %8s %8s %8s %8s %10.0f\n", r.k[:len(r.k)-1], r.k[len(r.k)-1:], ms(r.t.P50), ms(r.t.P95), ms(r.t.P99), ms(r.t.Max), r.t.QPS())
	}
	m := gs.ContainsMin
	p("%-12s | %8s %8s %8s %8s   (each query's fastest of %d passes, 1 client: less noise; mean %s ms)\n", "contains min", ms(m.P50), ms(m.P95), ms(m.P99), ms(m.Max), minPasses, ms(m.Mean))
	p("\n   contains work per query: %.0f candidates, %.0f verified, %.0f steps, %.1f allocs, %.0f bytes\n",
		gs.CandidatesPerQ, gs.VerifiedPerQ, gs.StepsPerQ, gs.AllocsPerQ, gs.BytesPerQ)
	for _, c := range slices.Sorted(maps.Keys(gs.ByClass)) {
		g := gs.ByClass[c]
		p("   %-8s %5d | p50/p99/max %s / %s / %s ms\n", c, g.Queries, ms(g.P50), ms(g.P99), ms(g.Max))
	}
	how, other := "mapped", "held in memory"
	if gs.LookupHeld {
		how, other = other, how
	}
	if l := gs.Lookup; l.Measured && l.Queries > 0 {
		p("\n   record-store lookups, stores %s (as gds serve opens them): p50 %.1f us, mean %.1f us, p99 %.1f us (%d characters, %d errors)\n",
			how, us(l.P50), us(l.Mean), us(l.P99), l.Queries, l.Errors)
	}
	if l := gs.LookupOther; l.Measured && l.Queries > 0 {
		p("   the same, stores %s: p50 %.1f us, mean %.1f us, p99 %.1f us (%d errors)\n",
			other, us(l.P50), us(l.Mean), us(l.P99), l.Errors)
	}
	p("\n   slowest (one client, per-class pass):\n")
	for _, q := range gs.Slowest {
		p("   %9s ms  %-7s %-22q candidates %6d verified %6d hits %3d\n", ms(q.Took), q.Query.Class, q.Query.Text, q.Candidates, q.Verified, q.Hits)
	}
	fmt.Print(b.String())
}
