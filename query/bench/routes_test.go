//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"gds/indexer/affcol"
	"gds/snapshots"
)

// The route rows: the routes beside search, each over HTTP at 16
// connections against PostgreSQL doing the same work at 16 connections.
// A route the binary under test answers 404 (or 405) is skipped with a
// note, so the harness runs before and after the route exists.
//
//	affiliation: POST /characters/affiliation/, 1,000 character IDs a body;
//	             PostgreSQL looks them up by id, joined with corporations.
//	local:       POST /latest/local/, 1,000 character names a body, one a
//	             line; PostgreSQL looks them up by lower(name), joined with
//	             corporations and alliances, counted per group.
//	suggest:     GET /latest/suggest/?search=&categories=character&limit=10
//	             for 1,000 one-edit typos of names of 8+ characters;
//	             PostgreSQL orders by trigram distance (name <-> $1) on a
//	             GiST gist_trgm_ops index, built only then and counted in
//	             its build. Quality: recall@10 of the typo's true name.

// routeConns is the connections of every route row, both sides.
const routeConns = 16

// Route row names.
const (
	routeAffiliation = "affiliation, 1,000 IDs"
	routeLocal       = "local, 1,000 names"
	routeSuggest     = "suggest, limit 10"
)

// routeRow is one route measured on both sides.
type routeRow struct {
	Name    string
	Path    string // the path gds answered on
	Skipped string // why it was not measured
	GDS     Timing // wrk, routeConns connections, best round
	// ServerMean: gds's own time per answer, from its request-duration
	// histogram on /metrics over every round (waiting for a search slot
	// included); CPUPerReq: its CPU time per answer in the best round;
	// ServerOne: its time per answer over a round at one connection, where
	// no answer waits for another (GDSOne).
	ServerMean, CPUPerReq, ServerOne time.Duration
	GDSOne                           Timing
	PG                               Timing // pgx, routeConns connections
	// Check compares answers; Recall (gds, every typo), RecallSample
	// (gds) and PGRecall on the first PGSample typos are suggest's
	// quality; PostgreSQL's timed run asked PGAsked typos (PGBox).
	Check                          string
	Recall, RecallSample, PGRecall float64
	PGSample, PGAsked              int
	PGBox                          time.Duration
	Requests                       int
}

// routeResult is every route row, with PostgreSQL's extra tables.
type routeResult struct {
	Rows []routeRow
	// TablesLoad: the characters', corporations' and alliances' tables of
	// the affiliation and local rows (not in PostgreSQL's build, as gds's
	// build is not split by route).
	TablesLoad time.Duration
	Why        string
	// Columns says whether the generation served has the affiliation
	// columns the affiliation and local rows read (a generation reused
	// from an older build answers from its record stores instead).
	Columns bool
}

// routeWork is what the route rows are made from.
type routeWork struct {
	t                        *testing.T // for progress (logStep)
	gds, snapDir, data, work string
	pg                       *postgres
	snap                     *snapshots.Snapshot
	names                    []string // a sample of character names
	ids                      []int64  // their IDs
	unique                   []string // the names of names that name one character
	noCache                  string
	wrkDur, minTime          time.Duration
	maxPasses                int
	seed                     uint64
}

// routeSpec is one route's requests and PostgreSQL's side.
type routeSpec struct {
	name  string
	row   string   // its row of -rows
	paths []string // candidate paths, the first not answered 404 is used
	reqs  func(path string) []string
	// pg prepares what PostgreSQL needs (once) and returns one request's
	// work on a connection.
	pg func(ctx context.Context) (func(c *pgx.Conn, i int) error, error)
	// timed, when set, times PostgreSQL's side instead of whole passes of
	// pg's work (suggest's budgeted run).
	timed func(ctx context.Context, conns []*pgx.Conn, row *routeRow) Timing
	// check compares gds's captured answers with PostgreSQL's.
	check func(ctx context.Context, c *pgx.Conn, answers []answer, row *routeRow) string
}

// measureRoutes starts gds serve (response cache off) and measures every
// route row; load is PostgreSQL's build, to which the GiST index of the
// suggest row is added when that row runs.
func measureRoutes(ctx context.Context, w routeWork, conn *pgx.Conn, load *pgLoad) routeResult {
	var rr routeResult
	cols, _ := filepath.Glob(filepath.Join(w.data, "generations", "*", "records", string(snapshots.Characters)+affcol.Suffix))
	rr.Columns = len(cols) > 0
	help := serveHelp(w.gds)
	if help == "" {
		rr.Why = w.gds + " has no serve command"
		return rr
	}
	extra := cacheOffArgs(help)
	if w.noCache != "" {
		extra = strings.Fields(w.noCache)
	}
	if strings.Contains(help, "-rate-limit") {
		extra = append(extra, "--rate-limit", "off")
	}
	// A request of 1,000 names takes milliseconds: at 16 connections it
	// waits for one of the search slots (one per core) longer than the
	// default 50 ms, and would be shed with 503; queued, it is measured.
	if strings.Contains(help, "-search-queue-wait") {
		extra = append(extra, "--search-queue-wait", "10s")
	}
	// One client address: a row's error answers must not turn the next
	// rows' answers into 420.
	if strings.Contains(help, "-error-limit") {
		extra = append(extra, "--error-limit", "1000000000")
	}
	s, err := startServe(w.gds, w.snapDir, w.data, extra, w.work+"/serve-routes.log")
	if err != nil {
		rr.Why = err.Error()
		return rr
	}
	defer s.stop()
	if chosen.on("local") {
		if w.unique, err = uniqueNames(ctx, conn, w.names); err != nil {
			rr.Why = "PostgreSQL: " + err.Error()
			return rr
		}
		logStep(w.t, "local's bodies: %d of the %d sampled names name one character", len(w.unique), len(w.names))
	}
	tables := false
	for _, spec := range w.specs(conn, load, &tables, &rr) {
		if !chosen.on(spec.row) {
			rr.Rows = append(rr.Rows, routeRow{Name: spec.name, Skipped: notRun(spec.row)})
			continue
		}
		logStep(w.t, "route row %s", spec.name)
		rr.Rows = append(rr.Rows, w.measureRoute(ctx, s, spec))
	}
	return rr
}

// measureRoute probes the route, then measures it on both sides.
func (w routeWork) measureRoute(ctx context.Context, s *server, spec routeSpec) routeRow {
	row := routeRow{Name: spec.name}
	for _, p := range spec.paths {
		st, err := probe(s.addr, spec.reqs(p)[0])
		if err != nil {
			row.Skipped = err.Error()
			return row
		}
		if st != http.StatusNotFound && st != http.StatusMethodNotAllowed {
			row.Path = p
			break
		}
		row.Skipped += fmt.Sprintf("%s answers %d on this binary; ", p, st)
	}
	if row.Path == "" {
		row.Skipped = strings.TrimSuffix(row.Skipped, "; ")
		return row
	}
	row.Skipped = ""
	reqs := spec.reqs(row.Path)
	row.Requests = len(reqs)
	answers, err := capture(s.addr, reqs)
	if err != nil {
		row.Skipped = "capturing gds's answers: " + err.Error()
		return row
	}
	bad := 0
	for _, a := range answers {
		if a.Status != http.StatusOK {
			bad++
		}
	}
	if bad > 0 {
		row.Skipped = fmt.Sprintf("%d of %d answers not 200 (first: %s)", bad, len(answers), firstNot200(answers))
		return row
	}
	work, err := spec.pg(ctx)
	if err != nil {
		row.Skipped = "PostgreSQL: " + err.Error()
		return row
	}
	conns, err := w.pgConns(ctx, routeConns)
	if err != nil {
		row.Skipped = "PostgreSQL: " + err.Error()
		return row
	}
	defer func() {
		for _, c := range conns {
			c.Close(ctx)
		}
	}()
	logStep(w.t, "route row %s: gds, wrk %d rounds of %s", spec.name, max(1, wrkRounds), w.wrkDur)
	row.GDS, row.CPUPerReq, row.ServerMean = w.wrkRoute(s, row, reqs, routeConns, max(1, wrkRounds))
	row.GDSOne, _, row.ServerOne = w.wrkRoute(s, row, reqs, 1, 1)
	logStep(w.t, "route row %s: PostgreSQL at %d connections", spec.name, routeConns)
	if spec.timed != nil {
		row.PG = spec.timed(ctx, conns, &row)
	} else {
		row.PG = runTimed(len(reqs), routeConns, w.minTime, w.maxPasses, func(c, i int) error { return work(conns[c], i) })
	}
	row.Check = spec.check(ctx, conns[0], answers, &row)
	return row
}

// probe sends one request and returns the status of its answer.
func probe(addr, req string) (int, error) {
	method, path, body := splitRequest(req)
	r, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	if method == http.MethodPost {
		r.Header.Set("Content-Type", requestType(req))
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// wrkRoute runs the route's requests with wrk at conns connections, best
// of rounds rounds; server is gds's mean time per answer over them all.
func (w routeWork) wrkRoute(s *server, row routeRow, reqs []string, conns, rounds int) (best Timing, cpu, server time.Duration) {
	script, err := writeScript(w.work, "route-"+strings.Fields(row.Name)[0], reqs, false)
	if err != nil {
		return Timing{Note: err.Error()}, 0, 0
	}
	route := strings.TrimPrefix(row.Path, "/latest")
	sum0, n0 := serverTime(s.admin, route)
	for range rounds {
		cpu0 := procCPU(s.cmd.Process.Pid, false)
		if g := runWrk(s.addr, script, conns, w.wrkDur); !best.Measured || g.QPS() > best.QPS() {
			best = g
			if g.Queries > 0 {
				cpu = (procCPU(s.cmd.Process.Pid, false) - cpu0) / time.Duration(g.Queries)
			}
		}
	}
	if sum1, n1 := serverTime(s.admin, route); n1 > n0 {
		server = time.Duration((sum1 - sum0) / (n1 - n0) * float64(time.Second))
	}
	return best, cpu, server
}

// serverTime sums the request-duration histogram's _sum and _count over
// every series of /metrics whose route label ends with route.
func serverTime(admin, route string) (sum, count float64) {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	label := `route="`
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, "gds_http_request_duration_seconds_") {
			continue
		}
		i := strings.Index(rest, label)
		if i < 0 {
			continue
		}
		r, _, _ := strings.Cut(rest[i+len(label):], `"`)
		if !strings.HasSuffix(r, route) {
			continue
		}
		f := strings.Fields(line)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		switch name {
		case "gds_http_request_duration_seconds_sum":
			sum += v
		case "gds_http_request_duration_seconds_count":
			count += v
		}
	}
	return sum, count
}

func firstNot200(answers []answer) string {
	for _, a := range answers {
		if a.Status != http.StatusOK {
			return fmt.Sprintf("%d %s", a.Status, tail(string(a.Body), 200))
		}
	}
	return ""
}

// pgConns opens n connections.
func (w routeWork) pgConns(ctx context.Context, n int) ([]*pgx.Conn, error) {
	var out []*pgx.Conn
	for range n {
		c, err := w.pg.connect(ctx)
		if err != nil {
			for _, o := range out {
				o.Close(ctx)
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// uniqueNames keeps the names of the sample that name one character of
// the snapshot, as every name does in the game (a local pasted from it
// resolves to as many pilots as it has lines), in the sample's order.
func uniqueNames(ctx context.Context, conn *pgx.Conn, names []string) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT s.n FROM unnest($1::text[]) WITH ORDINALITY s(n, i)
		WHERE (SELECT count(*) FROM (SELECT 1 FROM names WHERE lower(name) = lower(s.n) LIMIT 2) c) = 1 ORDER BY s.i`, names)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	rows.Close()
	return out, rows.Err()
}

// bodies makes n requests of per distinct items of a pool of items (all
// of it when smaller; affiliation refuses a duplicate ID with 400), drawn
// deterministically.
func (w routeWork) bodies(pool, n, per int, stream uint64, item func(i int) string, join func([]string) string) []string {
	rng := rand.New(rand.NewPCG(w.seed, stream))
	idx := make([]int, pool)
	for i := range idx {
		idx[i] = i
	}
	per = min(per, len(idx))
	out := make([]string, n)
	items := make([]string, per)
	for k := range out {
		// A partial Fisher-Yates shuffle: the first per are distinct.
		for j := range items {
			r := j + rng.IntN(len(idx)-j)
			idx[j], idx[r] = idx[r], idx[j]
			items[j] = item(idx[j])
		}
		out[k] = join(items)
	}
	return out
}

// typos makes n one-edit typos (a letter deleted, inserted, replaced, or
// two swapped) of distinct sampled names of 8 or more characters, with
// the index in the sample of each typo's name.
func typos(names []string, n int, seed uint64) (texts []string, of []int) {
	rng := rand.New(rand.NewPCG(seed, 4))
	seen := map[string]bool{}
	for _, i := range rng.Perm(len(names)) {
		if len(texts) == n {
			break
		}
		name := names[i]
		r := []rune(name)
		if len(r) < 8 || seen[strings.ToLower(name)] {
			continue
		}
		seen[strings.ToLower(name)] = true
		p := 1 + rng.IntN(len(r)-2) // never the first or last letter
		letter := rune('a' + rng.IntN(26))
		switch rng.IntN(4) {
		case 0:
			r = append(r[:p], r[p+1:]...)
		case 1:
			r = append(r[:p], append([]rune{letter}, r[p:]...)...)
		default:
			if r[p] != r[p+1] {
				r[p], r[p+1] = r[p+1], r[p]
				break
			}
			fallthrough // swapping like letters changes nothing: replace one
		case 2:
			if r[p] == letter {
				letter = 'a' + (letter-'a'+1)%26
			}
			r[p] = letter
		}
		texts, of = append(texts, string(r)), append(of, i)
	}
	return texts, of
}

// jsonValues is every number and string of a JSON answer (strings folded
// to lower case), whatever the route's shape.
type jsonValues struct{ nums, strs map[string]bool }

func (v jsonValues) id(id int64) bool      { return v.nums[strconv.FormatInt(id, 10)] }
func (v jsonValues) name(name string) bool { return v.strs[strings.ToLower(name)] }

// answerValues collects the numbers and strings of a JSON body.
func answerValues(body []byte) jsonValues {
	out := jsonValues{nums: map[string]bool{}, strs: map[string]bool{}}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case json.Number:
			out.nums[x.String()] = true
		case string:
			out.strs[strings.ToLower(x)] = true
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// suggestPath is the suggest request for a text.
func suggestPath(path, text string) string {
	return path + "?" + url.Values{"search": {text}, "categories": {"character"}, "limit": {"10"}}.Encode()
}

// routeTable prints the route rows.
func routeTable(p func(string, ...any), rr routeResult, d time.Duration) {
	p("\n== routes beside PostgreSQL, %d connections each: gds over HTTP (wrk, %d rounds of %s, best shown; response cache off,\n", routeConns, wrkRounds, d)
	p("   --search-queue-wait 10s: requests queue for a search slot rather than being shed with 503 after 50 ms),\n")
	p("   PostgreSQL through pgx on its unix socket (prepared by pgx, %d connections); gds server = its mean time per answer from\n", routeConns)
	p("   /metrics (gds_http_request_duration_seconds), CPU/req = gds serve's CPU per answer\n")
	if rr.TablesLoad > 0 {
		p("   PostgreSQL's tables for affiliation and local (characters' corporations, corporations, alliances) loaded in %s, apart from its build\n", rr.TablesLoad.Round(time.Millisecond))
	}
	if rr.Why != "" {
		p("   not measured: %s\n", rr.Why)
		return
	}
	if !rr.Columns {
		p("   the generation has no affiliation columns (an older build's): affiliation and local read the record stores\n")
	}
	p("%-24s | %9s %8s %8s %9s %8s | %9s %8s %8s | %s\n", "route", "gds req/s", "p50 ms", "p99 ms", "server ms", "CPU/req", "PG q/s", "p50 ms", "p99 ms", "gds/PG")
	for _, r := range rr.Rows {
		if r.Skipped != "" {
			p("%-24s | skipped: %s\n", r.Name, r.Skipped)
			continue
		}
		g, q := r.GDS, r.PG
		ratio := "-"
		if q.QPS() > 0 && g.QPS() > 0 {
			ratio = fmt.Sprintf("%.1fx", g.QPS()/q.QPS())
		}
		p("%-24s | %9.0f %8s %8s %9s %6.0fus | %9.0f %8s %8s | %s\n", r.Name, g.QPS(), ms(g.P50), ms(g.P99), ms(r.ServerMean), us(r.CPUPerReq), q.QPS(), ms(q.P50), ms(q.P99), ratio)
		p("   %s %s, %d requests; %s\n", requestMethod(r.Name), r.Path, r.Requests, r.Check)
		if r.GDSOne.Measured {
			p("   one connection: %.0f req/s, p50 %s ms, p99 %s ms, server %s ms an answer\n", r.GDSOne.QPS(), ms(r.GDSOne.P50), ms(r.GDSOne.P99), ms(r.ServerOne))
		}
		if e := g.Errors + q.Errors; e > 0 || !g.Measured {
			p("   WARNING: %d errors (gds %d, PostgreSQL %d) %s\n", e, g.Errors, q.Errors, g.Note)
		}
	}
}

func requestMethod(name string) string {
	if name == routeSuggest {
		return "GET"
	}
	return "POST"
}
