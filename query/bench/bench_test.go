//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"gds/indexer"
	"gds/indexer/nametable"
	"gds/snapshots"
	"gds/snapshots/synth"
)

var (
	flagNames      = flag.Int64("names", 1_000_000, "generated player (character) names")
	flagQueries    = flag.Int("queries", 2000, "queries in the query set")
	flagSeed       = flag.Uint64("seed", 7, "seed of the generated names and of the query set")
	flagWork       = flag.String("work", "", "work directory, kept afterwards (snapshots are reused); default a temporary one")
	flagGDS        = flag.String("gds", "", "gds binary (default <repo>/bin/gds, built when missing)")
	flagSDE        = flag.String("sde", "", "SDE fixture to import as the base (default <repo>/snapshots/sde/testdata/sde)")
	flagPGBin      = flag.String("pgbin", "", "PostgreSQL server binaries (default the newest /usr/lib/postgresql/*/bin)")
	flagMinTime    = flag.Duration("mintime", 3*time.Second, "each timed scenario repeats whole passes over its queries until this much time has passed")
	flagMaxPasses  = flag.Int("maxpasses", 1000, "at most this many passes per scenario")
	flagRebuild    = flag.Bool("rebuild", true, "build the gds generation even when -work already holds one of the same snapshot (its recorded build time is reported otherwise)")
	flagHTTP       = flag.String("http", "auto", "auto: measure `gds serve` end to end when it exists; off: never")
	flagGCPercent  = flag.Int("gc-percent", indexer.DefaultBuildGCPercent, "GOGC of the build children, as `gds index --gc-percent` (its default 400; 100 is Go's)")
	flagNoCache    = flag.String("http-nocache", "", "gds serve flags that turn its response cache off (default: guessed from serve -h)")
	flagCPUProfile = flag.String("gds-cpuprofile", "", "write a CPU profile of the gds one-client contains scenario here")
	flagIncr       = flag.Bool("incremental", true, "also time an incremental reindex after 1% of the names change")
	flagGDSOnly    = flag.Bool("gds-only", false, "only the gds in-process search scenarios, on the data and queries.json already in -work (no generation, build, PostgreSQL or HTTP)")
	flagGDSResults = flag.String("gds-results", "", "file of every query's gds result IDs: written when missing, otherwise every result must equal it (order and content)")
	flagGDSTexts   = flag.String("gds-texts", "", "with -gds-only: only time these contains texts (comma-separated), printing each one's work and latency")
	flagAnalysts   = flag.String("analysts", "on", "on: also time the analysts' query set beside PostgreSQL; only: just that (after the build and load); off: never")
	flagSnapshot   = flag.String("snapshot", "", "use this snapshot (read only) instead of generating one into -work")
	flagWrkDur     = flag.Duration("wrk-duration", 5*time.Second, "each wrk round runs this long against gds and then as long against the ceiling")
	flagWrkRounds  = flag.Int("wrk-rounds", 3, "wrk rounds per row, alternating gds and the ceiling; each side's best round is reported")
	flagWrkThreads = flag.Int("wrk-threads", 1, "wrk -t: its threads share the machine's cores with the server")
	flagHTTPOnly   = flag.Bool("http-only", false, "only gds over HTTP and its ceiling, on the generation and queries.json a full run left in -work (no build, PostgreSQL or in-process search)")
	flagGoClients  = flag.Bool("go-clients", true, "also the HTTP rows of the Go client (1, 2 and 16 connections, cache on and off)")
	flagRoutes     = flag.String("routes", "on", "on: the route rows (affiliation, local, suggest) beside PostgreSQL, each skipped when gds answers it 404; off: never")
)

func repoRoot(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// gdsBinary is -gds, else <repo>/bin/gds, else one built into work.
func gdsBinary(t *testing.T, root, work string) string {
	gds := *flagGDS
	if gds == "" {
		gds = filepath.Join(root, "bin", "gds")
	}
	if _, err := os.Stat(gds); err != nil {
		gds = filepath.Join(work, "gds")
		logStep(t, "building %s", gds)
		cmd := exec.Command("go", "build", "-o", gds, "./cmd/gds")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	return gds
}

func TestBench(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("child process")
	}
	startProgress(t)
	if *flagCurveOf != "" {
		curveOf(t)
		return
	}
	if *flagSizes != "" {
		costCurve(t)
		return
	}
	var err error
	if chosen, err = parseRows(*flagRows); err != nil {
		t.Fatal(err)
	}
	if *flagAnalysts == "off" {
		chosen.drop("-analysts off", "analysts")
	}
	if !*flagIncr {
		chosen.drop("-incremental=false", "incremental")
	}
	if *flagRoutes == "off" {
		chosen.drop("-routes off", "affiliation", "local", "suggest")
	}
	if *flagHTTP == "off" {
		chosen.drop("-http off", "cached", "affiliation", "local", "suggest")
	}
	wrkThreads, wrkRounds, goClients = *flagWrkThreads, *flagWrkRounds, *flagGoClients
	if *flagGDSOnly {
		gdsOnly(t)
		return
	}
	if *flagHTTPOnly {
		httpOnly(t)
		return
	}
	ctx := context.Background()
	root := repoRoot(t)
	work := *flagWork
	if work == "" {
		work = t.TempDir()
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	work, _ = filepath.Abs(work)
	gds := gdsBinary(t, root, work)
	sde := *flagSDE
	if sde == "" {
		sde = filepath.Join(root, "snapshots", "sde", "testdata", "sde")
	}
	pgBin, err := pgBinDir(*flagPGBin)
	logStep(t, "rows: %s", chosen)
	if err != nil {
		t.Fatal(err)
	}
	n := *flagNames

	// 1. Snapshot: the SDE fixture plus n generated players.
	base := filepath.Join(work, "sde")
	if _, err := os.Stat(filepath.Join(base, "manifest.json")); err != nil {
		gdsRun(t, gds, "import-sde", sde, "--out", base)
	}
	snapDir := filepath.Join(work, fmt.Sprintf("snap-%d-%d-zstd", n, *flagSeed))
	if *flagSnapshot != "" {
		snapDir, _ = filepath.Abs(*flagSnapshot)
	}
	var genTime time.Duration
	if _, err := os.Stat(filepath.Join(snapDir, "manifest.json")); err != nil && *flagSnapshot == "" {
		logStep(t, "generating %d players", n)
		t0 := time.Now()
		gdsRun(t, gds, "generate", "--from", base, "--seed", fmt.Sprint(*flagSeed),
			"--characters", fmt.Sprint(n), "--corporations", fmt.Sprint(max(100, n/50)),
			"--alliances", fmt.Sprint(max(10, n/1000)), "--structures", fmt.Sprint(max(200, min(n/100, 100_000))),
			"--zstd", "--out", snapDir)
		genTime = time.Since(t0)
	}
	snap, err := snapshots.Open(snapDir)
	if err != nil {
		t.Fatal(err)
	}

	// 2. gds full build, in a child process.
	data := filepath.Join(work, "data")
	var build buildOut
	if gen, d, ok := reusable(data, snapDir); ok && (!*flagRebuild || !chosen.on("build")) {
		build = buildOut{Duration: d, Generation: gen}
		logStep(t, "gds build reused (-rebuild=false or no build row): %s", gen)
	} else {
		os.RemoveAll(data)
		logStep(t, "gds build")
		u := runHelperMem(t, "build", helperArgs{Data: data, Snapshot: snapDir, GCPercent: *flagGCPercent, Out: filepath.Join(work, "build.json")}, &build)
		build.MaxRSS, build.PeakAnon, build.CPU = u.MaxRSS, u.PeakAnon, u.CPU
	}
	gTotal, gChar, gTables, gBleve, gRecords := gdsSizes(build.Generation)
	logStep(t, "gds build %s, generation %s", build.Duration.Round(time.Millisecond), human(gTotal))

	if !chosen.on(besidePG...) {
		// No chosen row stands beside PostgreSQL: it is not loaded.
		_, _, note := incrementalRow(t, snap, snapDir, work, data)
		fmt.Printf("\n== %d generated character names, seed %d, %d cores; rows: %s\n%-34s | %s\n", snap.Count(snapshots.Characters), *flagSeed,
			runtime.NumCPU(), chosen, "incremental reindex, 1% renamed", note)
		return
	}

	// 3. PostgreSQL: start, COPY the same names, index.
	logStep(t, "postgres start (%s)", pgBin)
	pg := startPostgres(t, pgBin)
	conn, err := pg.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var pgVersion string
	conn.QueryRow(ctx, "SHOW server_version").Scan(&pgVersion)
	sample := make([]string, 0, 50_000)
	var sampleIDs []int64 // the characters of sample
	rng := rand.New(rand.NewPCG(*flagSeed, 1))
	var seen int
	var folds []foldPair // names whose gds folding differs from lower()
	conn2, err := pg.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close(ctx)
	// The ready CSV, its extraction timed apart from PostgreSQL's build.
	csvFile := filepath.Join(pg.dir, "names.csv")
	logStep(t, "extracting the names to %s", csvFile)
	t0 := time.Now()
	if err := writeCSV(snap, csvFile, func(id int64, name string) {
		seen++
		if f, l := nametable.Fold(name), strings.ToLower(name); f != l {
			folds = append(folds, foldPair{lower: l, folded: f})
		}
		if len(sample) < cap(sample) {
			sample, sampleIDs = append(sample, name), append(sampleIDs, id)
		} else if j := rng.IntN(seen); j < len(sample) {
			sample[j], sampleIDs[j] = name, id
		}
	}); err != nil {
		t.Fatal(err)
	}
	extract := time.Since(t0)
	logStep(t, "postgres load")
	stopWatch := watchIndexBuilds(ctx, t, pg)
	load, err := pg.load(ctx, conn, conn2, csvFile)
	stopWatch()
	if err != nil {
		t.Fatal(err)
	}
	load.Extract = extract
	os.Remove(csvFile)
	logStep(t, "postgres load %s (CSV written in %s): %d rows, %s", load.Build().Round(time.Millisecond), extract.Round(time.Millisecond), load.Rows, human(load.Total))

	if *flagAnalysts == "only" {
		logStep(t, "analysts' queries")
		ar := analystBench(ctx, conn, snap, data, sample, *flagMinTime, *flagMaxPasses)
		var b strings.Builder
		fmt.Fprintf(&b, "\n== %d generated character names (+ SDE fixture), seed %d, build %s, %d cores\n", load.Rows, *flagSeed, build.Duration.Round(time.Millisecond), runtime.NumCPU())
		analystTable(func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }, ar)
		fmt.Print(b.String())
		os.WriteFile(filepath.Join(work, "analysts.txt"), []byte(b.String()), 0o644)
		if ar.Err != nil {
			t.Fatal(ar.Err)
		}
		return
	}

	// 4.-6. The query set, gds in-process and PostgreSQL timed.
	var sr searchRun
	if chosen.search() {
		sr = measureSearch(ctx, t, conn, conn2, pg, sample, folds, work, data)
	}
	qs, gs, pgT := sr.qs, sr.gs, sr.pgT

	// 6b. The analysts' query set, both sides.
	var ar analystResult
	analysts := *flagAnalysts != "off" && chosen.on("analysts")
	if analysts {
		logStep(t, "analysts' queries")
		ar = analystBench(ctx, conn, snap, data, sample, *flagMinTime, *flagMaxPasses)
	}

	// 7. gds over HTTP.
	var hr httpResult
	switch {
	case *flagHTTP == "off":
		hr.Why = "-http off"
	case !chosen.search():
		hr.Why = "rows contains, strict, cached and lookups not run"
	default:
		logStep(t, "gds serve over HTTP")
		hr = measureHTTP(ctx, gds, snapDir, data, work, qs, *flagMinTime, *flagMaxPasses, *flagNoCache, *flagWrkDur)
	}

	// 7b. The routes beside search, against PostgreSQL.
	var rr routeResult
	switch {
	case *flagRoutes == "off":
		rr.Why = "-routes off"
	case *flagHTTP == "off":
		rr.Why = "-http off"
	case !chosen.on("affiliation", "local", "suggest"):
		rr.Why = "rows affiliation, local and suggest not run"
	default:
		logStep(t, "routes beside PostgreSQL")
		rr = measureRoutes(ctx, routeWork{t: t, gds: gds, snapDir: snapDir, data: data, work: work, pg: pg, snap: snap,
			names: sample, ids: sampleIDs, noCache: *flagNoCache, wrkDur: *flagWrkDur, minTime: *flagMinTime,
			maxPasses: *flagMaxPasses, seed: *flagSeed}, conn, &load)
	}

	// 8. Incremental reindex after 1% of the names change.
	incr, incrMake, incrNote := incrementalRow(t, snap, snapDir, work, data)

	// 9. The table.
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n== gds vs PostgreSQL %s pg_trgm: %d generated character names (+ SDE fixture), seed %d, %d cores (GOMAXPROCS %d)\n",
		pgVersion, load.Rows, *flagSeed, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	p("   snapshot %s: %s\n", snapDir, snap.Manifest.Source)
	p("   rows: %s\n", chosen)
	if chosen.search() {
		searchTable(p, sr, hr, len(folds))
	}
	wrkTable(p, hr, *flagWrkDur)
	routeTable(p, rr, *flagWrkDur)
	p("\n%-34s | %-30s | %s\n", "", "gds", "PostgreSQL")
	genNote := "reused"
	if genTime > 0 {
		genNote = genTime.Round(time.Millisecond).String()
	}
	buildNote := " (full, all categories)"
	if build.CPU == 0 {
		buildNote = " (reused: recorded in generation.json)"
	}
	p("%-34s | %-30s | %s\n", "build (names + SDE), wall", build.Duration.Round(time.Millisecond).String()+buildNote,
		fmt.Sprintf("%s = COPY FREEZE %s + indexes at once %s (GIN %s, btree %s) + analyze %s%s", load.Build().Round(time.Millisecond),
			load.Copy.Round(time.Millisecond), load.Indexes.Round(time.Millisecond), load.TrgmIndex.Round(time.Millisecond),
			load.LowerIndex.Round(time.Millisecond), load.Analyze.Round(time.Millisecond), gistNote(load)))
	p("%-34s | %-30s | %s\n", "build, CPU (user+system)", cpuNote(build.CPU, build.Duration), cpuNote(load.BuildCPU(), load.Build())+" (every postgres process)")
	p("%-34s | %-30s | %s\n", "ready CSV from the snapshot", "-", load.Extract.Round(time.Millisecond).String()+" (the harness; not in PostgreSQL's build)")
	p("%-34s | %-30s | %s\n", "incremental reindex, 1% renamed", incrNote, "-")
	p("%-34s | %-30s | %s\n", "on-disk size", human(gTotal)+" (generation)",
		fmt.Sprintf("%s (table %s + GIN %s + btree %s%s)", human(load.Disk()), human(load.Table), human(load.Trgm), human(load.Lower), gistSize(load)))
	p("%-34s | %s\n", "  gds breakdown", fmt.Sprintf("character dir %s; all tables %s; all bleve shards %s; record stores %s", human(gChar), human(gTables), human(gBleve), human(gRecords)))
	p("%-34s | %-30s | %s\n", "peak RSS, build", human(max(build.MaxRSS, incr.MaxRSS))+" (anonymous "+human(max(build.PeakAnon, incr.PeakAnon))+")", human(load.PeakPSS)+" (summed PSS of all postgres processes)")
	if chosen.search() {
		p("%-34s | %-30s | %s\n", "peak RSS, serving (search phase)", human(gs.MaxRSS)+fmt.Sprintf(" (after open %s)", human(gs.RSSAfterOpen)), human(sr.pgQueryPSS)+" (summed PSS)")
	}
	p("%-34s | %s\n", "generate snapshot", genNote+"; 1% rename "+incrMake.Round(time.Millisecond).String())
	if chosen.search() {
		classTable(p, sr)
	}
	if analysts {
		analystTable(p, ar)
	}
	targetsTable(p, targets{rows: load.Rows, hr: hr, build: build, incr: incr, incrOn: chosen.on("incremental"), load: load, gs: gs,
		pgContains1: pgT["contains1"], disk: gTotal, ar: ar, analysts: analysts, rr: rr})
	fmt.Print(b.String())
	os.WriteFile(filepath.Join(work, chosen.file("table", ".txt")), []byte(b.String()), 0o644)
	raw, _ := json.MarshalIndent(makeSummary(load.Rows, build, gTotal, gs, hr, load), "", "  ")
	if err := os.WriteFile(filepath.Join(work, "summary.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// searchTable prints the search rows: gds in-process beside PostgreSQL
// and gds over HTTP through the Go client; folds is the number of names
// gds and PostgreSQL fold differently.
func searchTable(p func(string, ...any), sr searchRun, hr httpResult, folds int) {
	p("   queries: %d contains + %d strict; classes: %s; every query gives the same hit count (min(500, matches)) on both\n",
		len(sr.contains), len(sr.strict), classCounts(sr.qs))
	if len(sr.excluded) > 0 {
		p("   %d generated queries excluded before the check: gds folds fully (ß→ss) where PostgreSQL lower() does not, and %d names differ so\n", len(sr.excluded), folds)
	}
	p("   gds: in-process query.Searcher, category character; PostgreSQL: pgx prepared `name ILIKE $1 LIMIT 500` (GIN gin_trgm_ops) / `lower(name) = lower($1) LIMIT 500` (btree)\n\n")
	p("%-9s %-2s | %-49s | %-49s | %s\n", "", "", "gds in-process", "PostgreSQL", "gds/PG")
	hdr := fmt.Sprintf("%8s %8s %8s %8s %10s", "p50 ms", "p95 ms", "p99 ms", "max ms", "q/s")
	p("%-9s %-2s | %s | %s | %s\n", "mode", "cl", hdr, hdr, "q/s")
	row := func(t Timing) string {
		if !t.Measured {
			return fmt.Sprintf("%-49s", "not measured")
		}
		return fmt.Sprintf("%8s %8s %8s %8s %10.0f", ms(t.P50), ms(t.P95), ms(t.P99), ms(t.Max), t.QPS())
	}
	gs, pgT := sr.gs, sr.pgT
	gdsT := map[string]Timing{"contains1": gs.Contains1, "contains2": gs.Contains2, "strict1": gs.Strict1, "strict2": gs.Strict2}
	for _, k := range []string{"contains1", "contains2", "strict1", "strict2"} {
		g, q := gdsT[k], pgT[k]
		ratio := "-"
		if q.QPS() > 0 {
			ratio = fmt.Sprintf("%.1fx", g.QPS()/q.QPS())
		}
		p("%-9s %-2s | %s | %s | %s\n", k[:len(k)-1], k[len(k)-1:], row(g), row(q), ratio)
	}
	p("\n%-22s | %s\n", "gds over HTTP", hdr)
	for _, cached := range []bool{true, false} {
		m, label := hr.Cached, "cache on"
		if !cached {
			m, label = hr.Uncached, "cache off"
		}
		for _, k := range []string{"contains1", "contains2", fmt.Sprintf("contains%d", httpConns), "strict1", "strict2"} {
			tm, ok := m[k]
			if ok && !tm.Measured && tm.Note != "" {
				p("%-22s | not measured: %s\n", label+" "+k, tm.Note)
				continue
			}
			if !ok || !hr.Available {
				why := hr.Why
				if why == "" {
					why = "not measured"
				}
				p("%-22s | not measured: %s\n", label+" "+k, why)
				break
			}
			p("%-22s | %s\n", label+" "+k, row(tm))
		}
	}
	if hr.Available {
		p("   HTTP: Go client (one request at a time per connection; %d connections in the contains%d rows), keep-alive, loopback; cache-off flags %q; %d count mismatches; server peak RSS %s\n", httpConns, httpConns, hr.CacheFlag, hr.Mismatches, human(hr.RSS))
	}
	for _, k := range []string{"contains1", "contains2", "strict1", "strict2"} {
		if e := gdsT[k].Errors + pgT[k].Errors; e > 0 {
			p("   WARNING: %d errors in %s\n", e, k)
		}
	}
}

// classTable prints gds's work per contains query and the latencies of
// both sides by class of query.
func classTable(p func(string, ...any), sr searchRun) {
	gs := sr.gs
	p("\n   gds contains work per query: %.0f candidates, %.0f verified, %.1f allocs, %.0f bytes allocated; open %s\n",
		gs.CandidatesPerQ, gs.VerifiedPerQ, gs.AllocsPerQ, gs.BytesPerQ, gs.OpenTime.Round(time.Millisecond))
	p("\n%-8s %5s | %-40s | %s\n", "class", "n", "gds 1 client p50/p99/max ms", "PostgreSQL count query p50/p99/max ms")
	for _, c := range slices.Sorted(maps.Keys(gs.ByClass)) {
		g := gs.ByClass[c]
		q := summarize(sr.pgByClass[c], 0, 0)
		p("%-8s %5d | %-40s | %s\n", c, g.Queries, ms(g.P50)+" / "+ms(g.P99)+" / "+ms(g.Max), ms(q.P50)+" / "+ms(q.P99)+" / "+ms(q.Max))
	}
	p("\n   slowest gds queries (one client, per-class pass):\n")
	for _, q := range gs.Slowest {
		p("   %9s ms  %-7s %-22q strict=%-5v candidates %6d verified %6d hits %3d\n", ms(q.Took), q.Query.Class, q.Query.Text, q.Query.Strict, q.Candidates, q.Verified, q.Hits)
	}
}

// searchRun is what the search rows measured: the query set, gds
// in-process and PostgreSQL's timings (keyed mode and clients) and count
// queries by class.
type searchRun struct {
	qs, excluded     []Query
	contains, strict []int
	gs               searchOut
	pgT              map[string]Timing
	pgByClass        map[string][]time.Duration
	pgQueryPSS       int64
}

// measureSearch makes the query set with PostgreSQL's hit counts, runs the
// gds search child (which checks them) and times PostgreSQL's rows.
func measureSearch(ctx context.Context, t *testing.T, conn, conn2 *pgx.Conn, pg *postgres, sample []string, folds []foldPair, work, data string) searchRun {
	// Queries and the hit counts PostgreSQL gives.
	qs, excluded := dropFoldSensitive(makeQueries(sample, *flagQueries, *flagSeed), folds)
	for _, q := range excluded {
		logStep(t, "excluded (gds full case folding and PostgreSQL lower() disagree on some name): %q strict=%v", q.Text, q.Strict)
	}
	if err := prepare(ctx, conn); err != nil {
		t.Fatal(err)
	}
	logStep(t, "PostgreSQL's hit counts of %d queries", len(qs))
	pgByClass := map[string][]time.Duration{}
	for i := range qs {
		stmt := "count_contains"
		arg := likePattern(qs[i].Text)
		if qs[i].Strict {
			stmt, arg = "count_strict", qs[i].Text
		}
		t0 := time.Now()
		if err := conn.QueryRow(ctx, stmt, arg).Scan(&qs[i].Want); err != nil {
			t.Fatalf("%q: %v", qs[i].Text, err)
		}
		pgByClass[qs[i].Class] = append(pgByClass[qs[i].Class], time.Since(t0))
	}
	qfile := filepath.Join(work, "queries.json")
	raw, _ := json.MarshalIndent(qs, "", " ")
	if err := os.WriteFile(qfile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	contains, strict := split(qs)
	logStep(t, "%d queries (%d contains, %d strict) written to %s", len(qs), len(contains), len(strict), qfile)

	// gds in-process: checks the counts, then times (child process).
	settle(ctx, t, conn)
	logStep(t, "gds search")
	var gs searchOut
	runSearch(t, helperArgs{Data: data, Queries: qfile, MinTime: *flagMinTime,
		MaxPasses: *flagMaxPasses, CPUProfile: *flagCPUProfile, Results: *flagGDSResults, Out: filepath.Join(work, "search.json")}, &gs)
	if len(gs.Mismatches) > 0 {
		for i, m := range gs.Mismatches {
			if i == 30 {
				break
			}
			t.Errorf("hit counts differ for %q (strict %v, %s): gds %d, PostgreSQL %d", m.Query.Text, m.Query.Strict, m.Query.Class, m.Got, m.Query.Want)
		}
		t.Fatalf("%d of %d queries give different hit counts; nothing timed", len(gs.Mismatches), len(qs))
	}

	// PostgreSQL timed, one and two connections.
	logStep(t, "postgres search")
	if err := prepare(ctx, conn2); err != nil {
		t.Fatal(err)
	}
	conns := []*pgx.Conn{conn, conn2}
	pgQuery := func(client int, q Query) error {
		stmt, arg := "contains", likePattern(q.Text)
		if q.Strict {
			stmt, arg = "strict", q.Text
		}
		rs, err := conns[client].Query(ctx, stmt, arg)
		if err != nil {
			return err
		}
		var id int64
		k := 0
		for rs.Next() {
			if err := rs.Scan(&id); err != nil {
				rs.Close()
				return err
			}
			k++
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		if k != q.Want {
			return fmt.Errorf("%q: %d rows, want %d", q.Text, k, q.Want)
		}
		return nil
	}
	pgSampler := sampleTree(pg.pid, 250*time.Millisecond)
	pgT := map[string]Timing{}
	for _, m := range []struct {
		mode string
		idx  []int
	}{{"contains", contains}, {"strict", strict}} {
		if !chosen.on(m.mode) {
			continue
		}
		for _, clients := range []int{1, 2} {
			pgT[fmt.Sprintf("%s%d", m.mode, clients)] = runTimed(len(m.idx), clients, *flagMinTime, *flagMaxPasses, func(c, i int) error {
				return pgQuery(c, qs[m.idx[i]])
			})
		}
	}
	pgQueryPSS := pgSampler.Stop()

	return searchRun{qs: qs, excluded: excluded, contains: contains, strict: strict, gs: gs, pgT: pgT, pgByClass: pgByClass, pgQueryPSS: pgQueryPSS}
}

// foldPair is a name as PostgreSQL lower() and gds Fold see it.
type foldPair struct{ lower, folded string }

// dropFoldSensitive removes the queries whose hit counts depend on the
// difference between full case folding (gds: "ß" is "ss") and lower()
// (PostgreSQL): the text itself folds differently, or one of the names that
// fold differently matches under one rule and not the other.
func dropFoldSensitive(qs []Query, folds []foldPair) (kept, dropped []Query) {
	for _, q := range qs {
		text := strings.TrimSpace(q.Text)
		lt, ft := strings.ToLower(text), nametable.Fold(text)
		sensitive := lt != ft
		for _, f := range folds {
			if sensitive {
				break
			}
			if q.Strict {
				sensitive = (f.lower == lt) != (f.folded == ft)
			} else {
				sensitive = strings.Contains(f.lower, lt) != strings.Contains(f.folded, ft)
			}
		}
		if sensitive {
			dropped = append(dropped, q)
		} else {
			kept = append(kept, q)
		}
	}
	return kept, dropped
}

// reusable reports the live generation in data when it was built from
// snap, with its recorded build duration.
func reusable(data, snap string) (string, time.Duration, bool) {
	raw, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		return "", 0, false
	}
	gen := filepath.Join(data, "generations", fmt.Sprintf("%06s", strings.TrimSpace(string(raw))))
	var meta struct {
		Snapshot      string  `json:"snapshot"`
		BuildDuration float64 `json:"build_duration"`
	}
	raw, err = os.ReadFile(filepath.Join(gen, "generation.json"))
	if err != nil || json.Unmarshal(raw, &meta) != nil || meta.Snapshot != snap {
		return "", 0, false
	}
	return gen, time.Duration(meta.BuildDuration * float64(time.Second)), true
}

func classCounts(qs []Query) string {
	m := map[string]int{}
	for _, q := range qs {
		m[q.Class]++
	}
	var parts []string
	for _, c := range []string{"short", "long", "whole", "random", "common", "punct"} {
		parts = append(parts, fmt.Sprintf("%s %d", c, m[c]))
	}
	return strings.Join(parts, ", ")
}

func gdsRun(t *testing.T, gds string, args ...string) {
	t.Helper()
	cmd := exec.Command(gds, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gds %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// renameOnePercent writes a copy of snap where every hundredth character
// has a changed name.
func renameOnePercent(snap *snapshots.Snapshot, dir string) error {
	return synth.Rename(snap, dir, snap.Manifest.Source+" (1% renamed)", 100, func(name string) string {
		r := []rune(name)
		if r[len(r)-1] == 'q' {
			r[len(r)-1] = 'z'
		} else {
			r[len(r)-1] = 'q'
		}
		if utf8.RuneCountInString(name) > 0 {
			return string(r)
		}
		return name
	})
}

// cpuNote is CPU time with its share of the wall time (cores kept busy).
func cpuNote(cpu, wall time.Duration) string {
	if cpu <= 0 {
		return "not measured"
	}
	return fmt.Sprintf("%s (%.2f cores over %s)", cpu.Round(10*time.Millisecond), cpu.Seconds()/max(wall.Seconds(), 1e-9), wall.Round(time.Millisecond))
}

func gistNote(l pgLoad) string {
	if l.GiST == 0 {
		return ""
	}
	siglen := "default siglen"
	if *flagGiSTSiglen > 0 {
		siglen = fmt.Sprintf("siglen=%d", *flagGiSTSiglen)
	}
	return fmt.Sprintf(" + GiST for suggest (%s) %s", siglen, l.GiST.Round(time.Millisecond))
}

func gistSize(l pgLoad) string {
	if l.GiSTSize == 0 {
		return ""
	}
	return " + GiST " + human(l.GiSTSize)
}

// besidePG are the rows measured beside PostgreSQL, which is loaded only
// when one of them runs.
var besidePG = []string{"build", "contains", "strict", "cached", "lookups", "analysts", "affiliation", "local", "suggest"}

// incrementalRow times an incremental reindex after 1% of the characters
// are renamed (step 8), on a hard-linked copy of data (generation files
// are never changed in place), so that -rebuild=false can reuse data. It
// returns the build, the time the renamed snapshot took to write and the
// row's note.
func incrementalRow(t *testing.T, snap *snapshots.Snapshot, snapDir, work, data string) (buildOut, time.Duration, string) {
	var incr buildOut
	if !chosen.on("incremental") { // -incremental=false drops the row too
		return incr, 0, "not measured: " + notRun("incremental")
	}
	logStep(t, "incremental: renaming 1%% of the characters")
	t0 := time.Now()
	changed := filepath.Join(work, filepath.Base(snapDir)+"-renamed")
	if err := renameOnePercent(snap, changed); err != nil {
		t.Fatal(err)
	}
	made := time.Since(t0)
	incrData := filepath.Join(work, "data-incremental")
	os.RemoveAll(incrData)
	if out, err := exec.Command("cp", "-al", data, incrData).CombinedOutput(); err != nil {
		t.Fatalf("cp -al: %v\n%s", err, out)
	}
	logStep(t, "incremental build")
	u := runHelperMem(t, "build", helperArgs{Data: incrData, Snapshot: changed, GCPercent: *flagGCPercent, Out: filepath.Join(work, "incr.json")}, &incr)
	incr.MaxRSS, incr.PeakAnon, incr.CPU = u.MaxRSS, u.PeakAnon, u.CPU
	os.RemoveAll(incrData)
	if *flagWork == "" {
		os.RemoveAll(changed)
	}
	return incr, made, fmt.Sprintf("%s (incremental=%v, %d records changed; searchable after %s)", incr.Duration.Round(time.Millisecond),
		incr.Incremental, incr.Changed, incr.Searchable.Round(time.Millisecond))
}
