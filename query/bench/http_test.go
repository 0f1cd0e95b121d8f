//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// httpResult is the end-to-end measurement of `gds serve`.
type httpResult struct {
	Available bool
	Why       string // why it was not measured
	// Cached and Uncached, per mode and clients.
	Cached, Uncached map[string]Timing
	CacheFlag        string
	Mismatches       int
	RSS              int64 // peak RSS of the server (VmHWM), bytes
	// Rows: wrk against gds and against the ceiling, one run after the
	// other; Ceiling says what the ceiling served and whether its answers
	// had gds's shape.
	Rows    []wrkRow
	Ceiling []string
}

// wrkRow is one wrk scenario, run against gds, the ceiling and nginx.
type wrkRow struct {
	Scenario            string
	Conns               int
	GDS, Ceiling, Nginx Timing
	// CPUPerReq: gds serve's CPU time (user and system) per answer in
	// its best round.
	CPUPerReq time.Duration
}

// Fraction is gds's request rate as a share of the ceiling's.
func (r wrkRow) Fraction() float64 {
	if !r.GDS.Measured || !r.Ceiling.Measured || r.Ceiling.QPS() <= 0 {
		return 0
	}
	return r.GDS.QPS() / r.Ceiling.QPS()
}

// The wrk scenarios and their connections; rows are looked up by these.
const (
	scenStrict   = "strict, cache off"
	scenCached   = "cached, Zipf mix"
	scenContains = "contains, cache off"
	scenNames    = "names, 20 IDs"
)

// scenRow is the row (-rows) of each scenario.
var scenRow = map[string]string{scenStrict: "strict", scenCached: "cached", scenContains: "contains", scenNames: "lookups"}

// wrkPlan lists, per phase, the scenarios and connection counts.
var wrkPlan = map[string][]struct {
	scenario string
	conns    []int
}{
	"cached":   {{scenCached, []int{16, 32}}},
	"uncached": {{scenStrict, []int{16, 32}}, {scenContains, []int{1, 16, 32}}, {scenNames, []int{1, 16}}},
}

// row returns the measured row of scenario at conns.
func (r httpResult) row(scenario string, conns int) (wrkRow, bool) {
	for _, w := range r.Rows {
		if w.Scenario == scenario && w.Conns == conns {
			return w, true
		}
	}
	return wrkRow{}, false
}

// serveHelp returns `gds serve -h` output, or "" when there is no serve
// command.
func serveHelp(bin string) string {
	out, _ := exec.Command(bin, "serve", "-h").CombinedOutput()
	s := string(out)
	if strings.Contains(s, "unknown command") || !strings.Contains(s, "-snapshot") {
		return ""
	}
	return s
}

// cacheOffArgs guesses the flag that turns the response cache off from the
// help text (Go flag output: "  -name type" then the description on the
// next line); override with -http-nocache.
func cacheOffArgs(help string) []string {
	flagRE := regexp.MustCompile(`(?m)^\s+-([a-z0-9-]*cache[a-z0-9-]*)(?:[ \t]+(\S+))?\n\s*(.*)$`)
	for _, m := range flagRE.FindAllStringSubmatch(help, -1) {
		name, typ, desc := m[1], m[2], strings.ToLower(m[3])
		switch {
		case strings.HasPrefix(name, "no-") || strings.HasPrefix(name, "disable-"):
			return []string{"--" + name}
		case strings.Contains(desc, "negative"):
			return []string{"--" + name + "=-1"}
		case typ == "int" || typ == "uint" || typ == "int64" || strings.Contains(name, "size") || strings.Contains(name, "entries"):
			return []string{"--" + name + "=0"}
		case typ == "duration" || strings.Contains(name, "ttl"):
			return []string{"--" + name + "=0s"}
		case typ == "" || typ == "value":
			return []string{"--" + name + "=false"}
		}
	}
	return nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// server is a running `gds serve`.
type server struct {
	*process
	addr  string
	admin string // the operator port (/metrics)
	log   string
}

func startServe(bin, snapshot, data string, extra []string, logPath string) (*server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	admin, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--snapshot", snapshot, "--data", data, "--addr", addr, "--admin-addr", admin}, extra...)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p, err := startProcess(exec.Command(bin, args...), logf)
	if err != nil {
		return nil, err
	}
	s := &server{process: p, addr: addr, admin: admin, log: logPath}
	// Ready when a search answers 200 (the generation is live).
	deadline := time.Now().Add(10 * time.Minute)
ready:
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/latest/search/?search=abc&categories=character")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			break ready
		case <-time.After(200 * time.Millisecond):
		}
	}
	s.stop()
	raw, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("gds serve did not become ready:\n%s", tail(string(raw), 2000))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// httpConns is the number of concurrent keep-alive connections of the
// HTTP load row: enough to keep the server's 2 cores busy while the client
// shares them, as a real client population would.
const httpConns = 16

// goClients turns the Go client's HTTP rows on (-go-clients).
var goClients = true

// measureHTTP times the queries end to end, with and without the
// response cache.
func measureHTTP(ctx context.Context, bin, snapshot, data, work string, qs []Query, minTime time.Duration, maxPasses int, noCache string, wrkDur time.Duration) httpResult {
	r := httpResult{Cached: map[string]Timing{}, Uncached: map[string]Timing{}}
	help := serveHelp(bin)
	if help == "" {
		r.Why = fmt.Sprintf("%s has no serve command yet", bin)
		return r
	}
	r.Available = true
	var off []string
	if noCache != "" {
		off = strings.Fields(noCache)
	} else {
		off = cacheOffArgs(help)
	}
	r.CacheFlag = strings.Join(off, " ")
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: httpConns, MaxIdleConnsPerHost: httpConns, IdleConnTimeout: time.Minute}}
	contains, strict := split(qs)
	do := func(addr string, q Query, check bool) error {
		resp, err := client.Get("http://" + addr + searchPath(q))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("%q: HTTP %d", q.Text, resp.StatusCode)
		}
		if check {
			var got map[string][]int64
			if err := json.Unmarshal(body, &got); err != nil {
				return err
			}
			if len(got["character"]) != q.Want {
				return fmt.Errorf("%q: %d hits, want %d", q.Text, len(got["character"]), q.Want)
			}
		}
		return nil
	}
	phase := func(name string, extra []string, into map[string]Timing, warm bool) {
		s, err := startServe(bin, snapshot, data, extra, filepath.Join(work, "serve-"+name+".log"))
		if err != nil {
			r.Why = err.Error()
			r.Available = false
			return
		}
		defer s.stop()
		// A checking pass first (it also fills the cache and warms up).
		for _, q := range qs {
			if err := do(s.addr, q, true); err != nil {
				r.Mismatches++
			}
		}
		_ = warm
		for _, m := range []struct {
			mode string
			idx  []int
		}{{"contains", contains}, {"strict", strict}} {
			if !goClients {
				break
			}
			if !chosen.on(m.mode) {
				continue
			}
			for _, clients := range []int{1, 2, httpConns} {
				if clients == httpConns && m.mode != "contains" {
					continue
				}
				into[fmt.Sprintf("%s%d", m.mode, clients)] = runTimed(len(m.idx), clients, minTime, maxPasses, func(_, i int) error {
					return do(s.addr, qs[m.idx[i]], false)
				})
			}
		}
		r.wrkPhase(name, s, work, qs, wrkDur)
		if hwm := procStatus(s.cmd.Process.Pid, "VmHWM") * 1024; hwm > r.RSS {
			r.RSS = hwm
		}
	}
	// The harness is one client at full speed, which the per-client rate
	// limits would answer 429 within seconds.
	var unlimited []string
	if strings.Contains(help, "-rate-limit") {
		unlimited = []string{"--rate-limit", "off"}
	}
	if chosen.on("cached") || goClients && chosen.on("contains", "strict") {
		phase("cached", unlimited, r.Cached, true)
	}
	if !r.Available {
		return r
	}
	if !chosen.on("contains", "strict", "lookups") {
		return r
	}
	if len(off) == 0 {
		r.Uncached = nil
		r.Why = "no flag found to turn the response cache off (-http-nocache)"
		return r
	}
	phase("uncached", append(unlimited, off...), r.Uncached, false)
	return r
}

// wrkPhase captures gds's answers to the phase's paths, starts the
// ceilings on each scenario's median answer, checks that the net/http
// ceiling answers in gds's shape, and runs each wrk row against gds, the
// ceiling and nginx in turn. The cached phase asks for the first 200
// contains texts in a Zipf-like mix (the cache holds them from the
// checking pass); the uncached one for every strict text and every
// contains text round robin, and resolves the characters the contains
// texts found, 20 a request (namesRequests).
func (r *httpResult) wrkPhase(phase string, s *server, work string, qs []Query, d time.Duration) {
	contains, strict := split(qs)
	paths := map[string][]string{}
	answers := map[string][]answer{}
	add := func(scenario string, idx []int) {
		for _, i := range idx {
			paths[scenario] = append(paths[scenario], searchPath(qs[i]))
		}
	}
	switch phase {
	case "cached":
		add(scenCached, contains[:min(len(contains), 200)])
	default:
		add(scenStrict, strict)
		add(scenContains, contains)
	}
	fail := func(err error) {
		r.Ceiling = append(r.Ceiling, fmt.Sprintf("%s: %v", phase, err))
		for _, p := range wrkPlan[phase] {
			for _, c := range p.conns {
				r.Rows = append(r.Rows, wrkRow{Scenario: p.scenario, Conns: c, GDS: Timing{Note: err.Error()}})
			}
		}
	}
	for _, p := range wrkPlan[phase] {
		if p.scenario == scenNames {
			paths[scenNames] = namesRequests(answers[scenContains], 20, 200)
		}
		got, err := capture(s.addr, paths[p.scenario])
		if err == nil && len(got) == 0 {
			err = fmt.Errorf("%s: no requests to make", p.scenario)
		}
		if err != nil {
			fail(fmt.Errorf("capturing gds's answers: %w", err))
			return
		}
		answers[p.scenario] = got
	}
	rows := r.measureScenarios(phase, s, work, paths, answers, d)
	if rows == nil {
		fail(errors.New(r.Ceiling[len(r.Ceiling)-1]))
		return
	}
	r.Rows = append(r.Rows, rows...)
}

// measureScenarios starts both ceilings on each scenario's median answer
// and runs the scenarios' rows of the phase's plan; nil when a ceiling
// failed (the reason noted in r.Ceiling).
func (r *httpResult) measureScenarios(phase string, s *server, work string, paths map[string][]string, answers map[string][]answer, d time.Duration) []wrkRow {
	var fixed []ceilingAnswer
	for _, p := range wrkPlan[phase] {
		fixed = append(fixed, ceilingAnswer{Name: p.scenario, Answer: median(answers[p.scenario])})
	}
	c, err := startCeiling(work, phase, fixed)
	if err != nil {
		r.Ceiling = append(r.Ceiling, fmt.Sprintf("%s: %v", phase, err))
		return nil
	}
	defer c.stop()
	ngx, nerr := startNginx(work, fixed)
	if nerr == nil {
		defer ngx.stop()
	}
	for _, f := range fixed {
		r.Ceiling = append(r.Ceiling, r.ceilingNote(f, answers[f.Name], c.addrs[f.Name], ngx, nerr, paths[f.Name][0]))
	}
	var rows []wrkRow
	for _, p := range wrkPlan[phase] {
		if !chosen.on(scenRow[p.scenario]) {
			continue
		}
		script, err := writeScript(work, strings.NewReplacer(", ", "-", " ", "-").Replace(p.scenario), paths[p.scenario], p.scenario == scenCached)
		if err != nil {
			r.Ceiling = append(r.Ceiling, err.Error())
			return nil
		}
		for _, conns := range p.conns {
			row := wrkRow{Scenario: p.scenario, Conns: conns}
			// Alternating rounds, each side's best kept: what another
			// process did to one round matters less.
			for round := 0; round < max(1, wrkRounds); round++ {
				cpu0 := procCPU(s.cmd.Process.Pid, false)
				if g := runWrk(s.addr, script, conns, d); !row.GDS.Measured || g.QPS() > row.GDS.QPS() {
					row.GDS = g
					if g.Queries > 0 {
						row.CPUPerReq = (procCPU(s.cmd.Process.Pid, false) - cpu0) / time.Duration(g.Queries)
					}
				}
				if ct := runWrk(c.addrs[p.scenario], script, conns, d); !row.Ceiling.Measured || ct.QPS() > row.Ceiling.QPS() {
					row.Ceiling = ct
				}
				if nerr != nil {
					row.Nginx = Timing{Note: nerr.Error()}
				} else if nt := runWrk(ngx.addrs[p.scenario], script, conns, d); !row.Nginx.Measured || nt.QPS() > row.Nginx.QPS() {
					row.Nginx = nt
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// ceilingNote says what the ceilings serve for a scenario and how their
// answers compare with gds's.
func (r *httpResult) ceilingNote(f ceilingAnswer, gds []answer, addr string, ngx *nginxServer, nerr error, path string) string {
	total := 0
	for _, a := range gds {
		total += a.Size
	}
	note := fmt.Sprintf("%s: %d requests, gds's answers %d bytes on average on the wire; both ceilings serve the median one, %d bytes (body %d)",
		f.Name, len(gds), total/max(1, len(gds)), f.Answer.Size, len(f.Answer.Body))
	got, err := capture(addr, []string{path})
	switch {
	case err != nil:
		note += fmt.Sprintf("; net/http ceiling: %v", err)
	case sameShape(f.Answer, got[0]) != "":
		note += "; net/http ceiling differs: " + sameShape(f.Answer, got[0])
	default:
		note += "; net/http ceiling: the same status, body and size, header by header"
	}
	if nerr != nil {
		return note + "; nginx: " + nerr.Error()
	}
	got, err = capture(ngx.addrs[f.Name], []string{path})
	switch {
	case err != nil:
		note += fmt.Sprintf("; nginx: %v", err)
	case got[0].Status != f.Answer.Status || !bytes.Equal(got[0].Body, f.Answer.Body):
		note += fmt.Sprintf("; nginx answers differently: status %d, body %d bytes", got[0].Status, len(got[0].Body))
	default:
		note += fmt.Sprintf("; nginx: the same status and body, %d bytes on the wire", got[0].Size)
	}
	return note
}

// namesRequests makes up to n POST /universe/names/ requests, each of per
// distinct characters that the answers (to contains searches) found, in
// the order found: the lookups a client makes after searching.
func namesRequests(answers []answer, per, n int) []string {
	seen := map[int64]bool{}
	var ids []string
	for _, a := range answers {
		var got map[string][]int64
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &got) != nil {
			continue
		}
		for _, id := range got["character"] {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, strconv.FormatInt(id, 10))
			}
		}
	}
	var out []string
	for len(out) < n && len(ids) >= per {
		out = append(out, postRequest("/latest/universe/names/", "["+strings.Join(ids[:per], ",")+"]"))
		ids = ids[per:]
	}
	return out
}

// A request of a wrk script, a capture or the ceiling is its path (a GET),
// or "POST path", a newline and the JSON body, or "POST path type", a
// newline and a body of that content type.
func postRequest(path, body string) string { return "POST " + path + "\n" + body }

// postTypedRequest is a POST of body with the given content type.
func postTypedRequest(path, contentType, body string) string {
	return "POST " + path + " " + contentType + "\n" + body
}

// splitRequest returns a request's method, path and body.
func splitRequest(req string) (method, path, body string) {
	if rest, ok := strings.CutPrefix(req, "POST "); ok {
		path, body, _ = strings.Cut(rest, "\n")
		path, _, _ = strings.Cut(path, " ")
		return http.MethodPost, path, body
	}
	return http.MethodGet, req, ""
}

// requestType is a POST's content type (JSON unless it says otherwise).
func requestType(req string) string {
	if rest, ok := strings.CutPrefix(req, "POST "); ok {
		line, _, _ := strings.Cut(rest, "\n")
		if _, t, ok := strings.Cut(line, " "); ok {
			return t
		}
	}
	return "application/json"
}
