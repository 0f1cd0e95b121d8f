//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The last two tables the harness prints: gds over HTTP against its
// ceiling, and every target with what this run measured and whether it
// was met.

// wrkRows is the order of the ceiling table's rows.
var wrkRows = []struct {
	scenario string
	conns    int
}{
	{scenStrict, 16}, {scenStrict, 32},
	{scenCached, 16}, {scenCached, 32},
	{scenContains, 1}, {scenContains, 16}, {scenContains, 32},
	{scenNames, 1}, {scenNames, 16},
}

func wrkTable(p func(string, ...any), hr httpResult, d time.Duration) {
	p("\n== gds over HTTP against its ceilings: wrk -t%d --latency, loopback, no gzip asked for; per row %d rounds of %s against gds, the\n", wrkThreads, wrkRounds, d)
	p("   net/http ceiling and nginx in turn, each side's best round shown (p50/p99/max are that round's)\n")
	p("   wrk shares the machine's cores with the server it drives; gds serve runs with --rate-limit off (one client address)\n")
	p("   ceilings: every request of a scenario answered with one prepared answer, the scenario's median-sized answer from gds, no lookup:\n")
	p("   ceiling = a minimal net/http server in its own process (status, every header, the body); nginx = Debian's, 2 workers, `return`\n")
	if !hr.Available {
		p("   not measured: %s\n", hr.Why)
		return
	}
	for _, c := range hr.Ceiling {
		p("   %s\n", c)
	}
	p("   strict: every strict text; cached: 200 contains texts in a Zipf-like mix, response cache on; contains: every contains text;\n")
	p("   names: POST /universe/names/ of 20 characters the contains texts found, 200 bodies round robin (record-store lookups)\n")
	p("   gds CPU/req: gds serve's user+system CPU over its best round, per answer\n")
	p("\n%-20s %5s | %10s %8s %8s %8s %8s | %10s %8s %8s | %10s %8s | %s\n", "scenario", "conns", "gds req/s", "p50 ms", "p99 ms", "max ms", "CPU/req", "ceil req/s", "p50 ms", "p99 ms", "nginx r/s", "p99 ms", "gds/ceiling gds/nginx")
	for _, w := range wrkRows {
		r, ok := hr.row(w.scenario, w.conns)
		switch {
		case !ok:
			p("%-20s %5d | not measured\n", w.scenario, w.conns)
		case !r.GDS.Measured || !r.Ceiling.Measured:
			p("%-20s %5d | not measured: %s%s\n", w.scenario, w.conns, r.GDS.Note, r.Ceiling.Note)
		default:
			p("%s\n", wrkLine(r))
		}
	}
}

// wrkLine is one row of the ceilings table.
func wrkLine(r wrkRow) string {
	g, c, n := r.GDS, r.Ceiling, r.Nginx
	nginx, vsNginx := fmt.Sprintf("%10s %8s", "-", "-"), "-"
	if n.Measured && n.QPS() > 0 {
		nginx, vsNginx = fmt.Sprintf("%10.0f %8s", n.QPS(), ms(n.P99)), fmt.Sprintf("%.0f%%", 100*g.QPS()/n.QPS())
	}
	line := fmt.Sprintf("%-20s %5d | %10.0f %8s %8s %8s %6.1fus | %10.0f %8s %8s | %s | %10.0f%% %8s", r.Scenario, r.Conns,
		g.QPS(), ms(g.P50), ms(g.P99), ms(g.Max), us(r.CPUPerReq), c.QPS(), ms(c.P50), ms(c.P99), nginx, 100*r.Fraction(), vsNginx)
	if e := g.Errors + c.Errors + n.Errors; e > 0 {
		line += fmt.Sprintf("\n   WARNING: %d non-2xx answers or socket errors (gds %d, ceiling %d, nginx %d)", e, g.Errors, c.Errors, n.Errors)
	}
	if !n.Measured && n.Note != "" {
		line += "\n   nginx not measured: " + n.Note
	}
	return line
}

// targets is what the closing table reads.
type targets struct {
	rows        int64
	hr          httpResult
	build, incr buildOut
	incrOn      bool
	load        pgLoad
	gs          searchOut
	pgContains1 Timing
	disk        int64
	ar          analystResult
	analysts    bool
	rr          routeResult
}

// targetsTable prints target | measured | met for every figure of the
// HTTP and build work (issue 20), the figures kept from before, and the
// analysts' set (issue 19).
func targetsTable(p func(string, ...any), t targets) {
	p("\n== targets (stated for 10,000,000 names; this run has %d)\n", t.rows)
	p("%-52s | %-64s | %s\n", "target", "measured", "met")
	row := func(target, measured string, met bool) {
		m := "no"
		if met {
			m = "yes"
		}
		p("%-52s | %-64s | %s\n", target, measured, m)
	}
	none := func(target, why string) { p("%-52s | %-64s | %s\n", target, "not measured: "+why, "-") }
	httpTargetRows(row, none, t.hr)

	pg := t.load.Build()
	pgNote := fmt.Sprintf("PostgreSQL's COPY+indexes+ANALYZE %s", roundSecs(pg))
	if t.load.GiST > 0 {
		pgNote += " (GiST included)"
	}
	b := t.build.Duration
	if t.build.MaxRSS > 0 { // built in this run (a reused build's time is an earlier run's)
		row("full build <= 1.5x PostgreSQL's build", fmt.Sprintf("%s = %.2fx %s; %.2fx counting its CSV extraction", roundSecs(b), b.Seconds()/pg.Seconds(), pgNote,
			b.Seconds()/(pg+t.load.Extract).Seconds()), b.Seconds() <= 1.5*pg.Seconds())
	} else {
		none("full build <= 1.5x PostgreSQL's build", reusedWhy())
	}
	if c, pc := t.build.CPU, t.load.BuildCPU(); c > 0 && pc > 0 {
		p("%-52s | %-64s | %s\n", "  build CPU (no target)", fmt.Sprintf("%s = %.2fx PostgreSQL's %s", roundSecs(c), c.Seconds()/pc.Seconds(), roundSecs(pc)), "-")
	}
	if s := t.build.Searchable; s > 0 {
		how := "search answered before the build ended"
		if s >= b-b/100 {
			how = "search answered only when the build ended"
		}
		row("time to searchable <= PostgreSQL's build", fmt.Sprintf("%s = %.2fx (%s)", roundSecs(s), s.Seconds()/pg.Seconds(), how), s <= pg)
	} else {
		none("time to searchable <= PostgreSQL's build", reusedWhy())
	}
	if t.build.MaxRSS > 0 {
		// The build process also serves the generation it built (its tables
		// and record stores mapped): those pages are the files', which the
		// kernel drops under pressure; what the build must hold is the rest.
		row("peak build memory <= 3 GiB", fmt.Sprintf("%s anonymous (peak RSS %s with the generation's mapped files)", human(t.build.PeakAnon), human(t.build.MaxRSS)), t.build.PeakAnon > 0 && t.build.PeakAnon <= 3<<30)
	} else {
		none("peak build memory <= 3 GiB", reusedWhy())
	}
	gist := " (GiST included)"
	if t.load.GiST == 0 {
		gist = " (no GiST: row suggest not run, gds's typo index counted)"
	}
	row("disk <= 2x PostgreSQL's table+indexes", fmt.Sprintf("%s = %.2fx PostgreSQL's %s%s", human(t.disk), float64(t.disk)/float64(t.load.Disk()), human(t.load.Disk()), gist),
		float64(t.disk) <= 2*float64(t.load.Disk()))
	if l := t.gs.Lookup; l.Measured && l.Queries > 0 {
		how, other, otherFlag := "mapped", "held in memory", "true"
		if t.gs.LookupHeld {
			how, other, otherFlag = "held in memory", "mapped", "false"
		}
		also := ""
		if m := t.gs.LookupOther; m.Measured && m.Queries > 0 {
			also = fmt.Sprintf("; stores %s (--stores-in-memory=%s): p99 %.1f us, p50 %.1f us, %d errors", other, otherFlag, us(m.P99), us(m.P50), m.Errors)
		}
		row("record-store lookup < 20 us in-process (p99)", fmt.Sprintf("p99 %.1f us, p50 %.1f us, mean %.1f us (%d characters, %d errors; stores %s, as gds serve opens them by default)%s",
			us(l.P99), us(l.P50), us(l.Mean), l.Queries, l.Errors, how, also), l.P99 < 20*time.Microsecond && l.Errors == 0)
	} else if !chosen.on("lookups") {
		none("record-store lookup < 20 us in-process (p99)", notRun("lookups"))
	} else {
		none("record-store lookup < 20 us in-process (p99)", "no lookups")
	}

	c1, s1 := t.gs.Contains1, t.gs.Strict1
	if chosen.on("contains") {
		row("kept: contains p99 <= 3 ms in-process, 1 client", ms(c1.P99)+" ms", c1.Measured && c1.P99 <= 3*time.Millisecond)
		if q := t.pgContains1.QPS(); q > 0 {
			row("kept: contains >= 20x PostgreSQL q/s, 1 client", fmt.Sprintf("%.1fx (%.0f against %.0f q/s)", c1.QPS()/q, c1.QPS(), q), c1.QPS() >= 20*q)
		}
	} else {
		none("kept: contains p99 <= 3 ms in-process, 1 client", notRun("contains"))
	}
	if chosen.on("strict") {
		row("kept: strict >= 100,000 q/s in-process, 1 client", fmt.Sprintf("%.0f q/s", s1.QPS()), s1.QPS() >= 100_000)
	} else {
		none("kept: strict >= 100,000 q/s in-process, 1 client", notRun("strict"))
	}
	if !chosen.on("incremental") {
		none("kept: incremental reindex, 1% renamed <= 10 s", notRun("incremental"))
	} else if t.incrOn {
		// The new generation answers searches and lookups once its tables
		// and record stores are live; the analysts' bleve shards follow.
		live := t.incr.Duration
		if t.incr.Searchable > 0 {
			live = t.incr.Searchable
		}
		row("kept: incremental reindex, 1% renamed <= 10 s", fmt.Sprintf("live after %s, analysts' part after %s (%d records changed)", live.Round(time.Millisecond), t.incr.Duration.Round(time.Millisecond), t.incr.Changed), live <= 10*time.Second)
	} else {
		none("kept: incremental reindex, 1% renamed <= 10 s", "-incremental=false")
	}
	routeTargetRows(row, none, t.rr)
	rss := max(t.gs.MaxRSS, t.hr.RSS)
	if !chosen.search() {
		none("kept: serving RSS <= 1.5 GB", "rows contains, strict, cached and lookups not run")
	} else {
		row("kept: serving RSS <= 1.5 GB", fmt.Sprintf("%s (in-process search %s, gds serve %s)", human(rss), human(t.gs.MaxRSS), human(t.hr.RSS)), rss <= 1_500_000_000)
	}

	if !t.analysts {
		why := "-analysts off"
		if !chosen.on("analysts") {
			why = notRun("analysts")
		}
		none("analysts' set: p99 <= 300 ms per class", why)
		return
	}
	for _, c := range analystClasses {
		target := fmt.Sprintf("analysts' set, %s: p99 <= 300 ms", c)
		g := t.ar.GDS[c]
		if t.ar.Err != nil || !g.Measured {
			why := "not measured"
			if t.ar.Err != nil {
				why = t.ar.Err.Error()
			}
			none(target, why)
			continue
		}
		row(target, ms(g.P99)+" ms", g.P99 <= 300*time.Millisecond)
	}
}

// httpTargets prints only the HTTP rows of the targets table.
func httpTargets(p func(string, ...any), hr httpResult) {
	p("\n== HTTP targets (stated for 10,000,000 names)\n")
	p("%-52s | %-64s | %s\n", "target", "measured", "met")
	httpTargetRows(func(target, measured string, met bool) {
		m := "no"
		if met {
			m = "yes"
		}
		p("%-52s | %-64s | %s\n", target, measured, m)
	}, func(target, why string) { p("%-52s | %-64s | %s\n", target, "not measured: "+why, "-") }, hr)
}

// httpTargetRows reports the HTTP targets through row and none.
func httpTargetRows(row func(target, measured string, met bool), none func(target, why string), hr httpResult) {
	frac := func(scenario string, conns int, min float64) {
		target := fmt.Sprintf("%s, %d conns >= %.0f%% of ceiling", scenario, conns, 100*min)
		r, ok := hr.row(scenario, conns)
		if !ok || r.Fraction() == 0 {
			why := hr.Why
			if !chosen.on(scenRow[scenario]) {
				why = notRun(scenRow[scenario])
			} else if ok {
				why = r.GDS.Note + r.Ceiling.Note
			}
			none(target, why)
			return
		}
		row(target, fmt.Sprintf("%.0f%% (%.0f of %.0f req/s)", 100*r.Fraction(), r.GDS.QPS(), r.Ceiling.QPS()), r.Fraction() >= min)
	}
	frac(scenStrict, 16, 0.75)
	frac(scenStrict, 32, 0.75)
	frac(scenCached, 16, 0.75)
	frac(scenCached, 32, 0.75)
	frac(scenContains, 16, 0.35)
	frac(scenContains, 32, 0.35)
	if r, ok := hr.row(scenContains, 16); ok && r.GDS.Measured {
		row("contains, 16 conns, over HTTP: p99 <= 10 ms", fmt.Sprintf("%s ms (p50 %s ms)", ms(r.GDS.P99), ms(r.GDS.P50)), r.GDS.P99 <= 10*time.Millisecond)
	} else {
		none("contains, 16 conns, over HTTP: p99 <= 10 ms", hr.Why)
	}
}

// routeTargetRows reports the targets of affiliation, local and suggest.
func routeTargetRows(row func(target, measured string, met bool), none func(target, why string), rr routeResult) {
	get := func(name string) (routeRow, string) {
		for _, r := range rr.Rows {
			if r.Name == name {
				if r.Skipped != "" {
					return r, r.Skipped
				}
				return r, ""
			}
		}
		if rr.Why != "" {
			return routeRow{}, rr.Why
		}
		return routeRow{}, "not measured"
	}
	// Server time is gds's time per answer at one connection, where no
	// answer waits for a search slot behind others (at 16 connections on
	// 2 cores most of it is that wait; the route table prints both).
	if r, why := get(routeAffiliation); why != "" {
		none("affiliation, 1,000 IDs: <= 2 ms server", why)
	} else {
		row("affiliation, 1,000 IDs: <= 2 ms server", fmt.Sprintf("server %s ms at 1 conn (%s ms at %d conns, CPU %s ms an answer)", ms(r.ServerOne), ms(r.ServerMean), routeConns, ms(r.CPUPerReq)),
			r.ServerOne > 0 && r.ServerOne <= 2*time.Millisecond)
	}
	if r, why := get(routeLocal); why != "" {
		none("local, 1,000 names: <= 5 ms server, p99 <= 20 ms", why)
	} else {
		row("local, 1,000 names: <= 5 ms server, p99 <= 20 ms", fmt.Sprintf("server %s ms at 1 conn (%s ms at %d conns), p99 %s ms at %d conns", ms(r.ServerOne), ms(r.ServerMean), routeConns, ms(r.GDS.P99), routeConns),
			r.ServerOne > 0 && r.ServerOne <= 5*time.Millisecond && r.GDS.Measured && r.GDS.P99 <= 20*time.Millisecond)
	}
	r, why := get(routeSuggest)
	if why != "" {
		none("suggest: recall@10 >= 97%, >= PostgreSQL's", why)
		none("suggest: >= 20x PostgreSQL q/s, p99 <= 20 ms", why)
		return
	}
	row("suggest: recall@10 >= 97%, >= PostgreSQL's", fmt.Sprintf("%.1f%% of %d; on the first %d %.1f%% against PostgreSQL's %.1f%%", 100*r.Recall, r.Requests, r.PGSample, 100*r.RecallSample, 100*r.PGRecall),
		r.Recall >= 0.97 && r.RecallSample >= r.PGRecall)
	ratio := 0.0
	if r.PG.QPS() > 0 {
		ratio = r.GDS.QPS() / r.PG.QPS()
	}
	row("suggest: >= 20x PostgreSQL q/s, p99 <= 20 ms", fmt.Sprintf("%.0fx (%.0f against %.1f q/s, %d conns), p99 %s ms", ratio, r.GDS.QPS(), r.PG.QPS(), routeConns, ms(r.GDS.P99)),
		ratio >= 20 && r.GDS.Measured && r.GDS.P99 <= 20*time.Millisecond)
}

// reusedWhy says why the build was reused rather than timed.
func reusedWhy() string {
	if !chosen.on("build") {
		return "build reused: " + notRun("build")
	}
	return "build reused (-rebuild=false)"
}

// roundSecs rounds to the second past a minute, else to a tenth.
func roundSecs(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// httpOnly measures only gds over HTTP against its ceiling, on the
// generation and query set a full run left in -work: a quick loop for
// work on the HTTP path.
func httpOnly(t *testing.T) {
	work := *flagWork
	if work == "" {
		t.Fatal("-http-only needs -work with data/ and queries.json from a full run")
	}
	work, _ = filepath.Abs(work)
	data := filepath.Join(work, "data")
	raw, err := os.ReadFile(filepath.Join(work, "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []Query
	if err := json.Unmarshal(raw, &qs); err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Snapshot string `json:"snapshot"`
	}
	raw, err = os.ReadFile(filepath.Join(data, "generations", fmt.Sprintf("%06s", strings.TrimSpace(string(cur))), "generation.json"))
	if err != nil || json.Unmarshal(raw, &meta) != nil {
		t.Fatalf("the live generation's generation.json: %v", err)
	}
	gds := gdsBinary(t, repoRoot(t), work)
	wrkThreads, wrkRounds, goClients = *flagWrkThreads, *flagWrkRounds, *flagGoClients
	logStep(t, "gds serve over HTTP (%s, snapshot %s)", data, meta.Snapshot)
	hr := measureHTTP(context.Background(), gds, meta.Snapshot, data, work, qs, *flagMinTime, *flagMaxPasses, *flagNoCache, *flagWrkDur)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("\n== gds over HTTP only (%s), %d queries, %d cores\n", data, len(qs), runtime.NumCPU())
	if hr.Mismatches > 0 {
		p("   WARNING: %d answers had a different hit count from the query set's\n", hr.Mismatches)
	}
	wrkTable(p, hr, *flagWrkDur)
	httpTargets(p, hr)
	fmt.Print(b.String())
	os.WriteFile(filepath.Join(work, "table-http.txt"), []byte(b.String()), 0o644)
}
