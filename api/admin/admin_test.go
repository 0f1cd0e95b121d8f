package admin_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/api/admin"
	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query/analyst"
	"gds/snapshots"
	"gds/snapshots/disk"
)

// snapshot is a small universe; extra synthetic characters make a build
// take long enough for a second reindex request to arrive while it runs.
func snapshot(t *testing.T, extra int) string {
	t.Helper()
	recs := indexertest.Records{
		snapshots.Characters: {
			&snapshots.Character{Entity: indexertest.Named(90000001, "Jita Trader"), CorporationID: 98000001},
		},
		snapshots.SolarSystems: {
			&snapshots.SolarSystem{Entity: indexertest.Named(30000142, "Jita"), ConstellationID: 20000020},
			&snapshots.SolarSystem{Entity: indexertest.Named(30002187, "Amarr"), ConstellationID: 20000322},
		},
	}
	for i := range extra {
		recs[snapshots.Characters] = append(recs[snapshots.Characters],
			&snapshots.Character{Entity: indexertest.Named(int64(91000000+i), fmt.Sprintf("Pilot %d Alpha", i)), CorporationID: 98000001})
	}
	return indexertest.Snapshot(t, recs)
}

func openManager(t *testing.T, m *admin.Metrics) *indexer.Manager {
	t.Helper()
	mgr, _ := openManagerIn(t, m)
	return mgr
}

// openManagerIn opens a manager on a fresh data directory and returns both.
func openManagerIn(t *testing.T, m *admin.Metrics) (*indexer.Manager, string) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	mgr, err := indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard), OnBuild: m.ObserveBuild})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close() })
	return mgr, data
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
}

func do(t *testing.T, h http.Handler, method, target, body string, header ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	// What curl sends to the default operator address.
	req.Host = "127.0.0.1:9090"
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{rec.Code, rec.Header(), rec.Body.Bytes()}
}

func TestProbes(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	h := admin.New(admin.Options{Indexer: mgr, Metrics: metrics, Logger: zerolog.New(io.Discard)})
	if r := do(t, h, "GET", "/healthz", ""); r.status != 200 {
		t.Errorf("/healthz = %d", r.status)
	}
	r := do(t, h, "GET", "/readyz", "")
	var e struct{ Error string }
	r.decode(t, &e)
	if r.status != 503 || e.Error == "" {
		t.Errorf("/readyz before a generation = %d %s, want 503 with an error", r.status, r.body)
	}
	indexertest.Build(t, mgr, indexer.BuildRequest{Snapshot: snapshot(t, 0), Trigger: "test"})
	r = do(t, h, "GET", "/readyz", "")
	var ready struct{ Generation uint64 }
	r.decode(t, &ready)
	if r.status != 200 || ready.Generation != 1 {
		t.Errorf("/readyz after a build = %d %s", r.status, r.body)
	}
	// A further condition (gds serve: the public listener is up) holds
	// readiness back although a generation is live.
	notYet := admin.New(admin.Options{Indexer: mgr, Logger: zerolog.New(io.Discard),
		Ready: func() error { return errors.New("public listener is not up") }})
	r = do(t, notYet, "GET", "/readyz", "")
	if r.status != 503 || !bytes.Contains(r.body, []byte("public listener")) {
		t.Errorf("/readyz with Ready failing = %d %s", r.status, r.body)
	}
}

func TestStatusAndMetrics(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	metrics.WatchLive(mgr)
	snap := snapshot(t, 0)
	indexertest.Build(t, mgr, indexer.BuildRequest{Snapshot: snap, Trigger: "start"})
	if err := mgr.SetSchedule("@every 1h", snap); err != nil {
		t.Fatal(err)
	}
	h := admin.New(admin.Options{Indexer: mgr, Snapshot: snap, Metrics: metrics, Logger: zerolog.New(io.Discard)})
	r := do(t, h, "GET", "/admin/status", "")
	if r.status != 200 {
		t.Fatalf("/admin/status = %d %s", r.status, r.body)
	}
	var st struct {
		Live *struct {
			ID       uint64                     `json:"id"`
			Snapshot string                     `json:"snapshot"`
			Counts   map[snapshots.Category]int `json:"counts"`
		} `json:"live"`
		LastBuild *struct {
			Trigger  string  `json:"trigger"`
			Duration float64 `json:"duration"`
			Error    string  `json:"error"`
		} `json:"last_build"`
		Building *json.RawMessage `json:"building"`
		Schedule *struct {
			Spec string    `json:"spec"`
			Next time.Time `json:"next"`
		} `json:"schedule"`
		Snapshot string `json:"snapshot"`
	}
	r.decode(t, &st)
	switch {
	case st.Live == nil || st.Live.ID != 1 || st.Live.Snapshot != snap:
		t.Errorf("live = %s", r.body)
	case st.Live.Counts[snapshots.CategorySolarSystem] != 2 || st.Live.Counts[snapshots.CategoryCharacter] != 1:
		t.Errorf("counts = %v", st.Live.Counts)
	case st.LastBuild == nil || st.LastBuild.Trigger != "start" || st.LastBuild.Error != "" || st.LastBuild.Duration <= 0:
		t.Errorf("last build = %s", r.body)
	case st.Building != nil:
		t.Errorf("building = %s while idle", *st.Building)
	case st.Schedule == nil || st.Schedule.Spec != "@every 1h" || !st.Schedule.Next.After(time.Now()):
		t.Errorf("schedule = %s", r.body)
	case st.Snapshot != snap:
		t.Errorf("snapshot = %q", st.Snapshot)
	}

	metrics.ObserveRequest("/search/", "v2", 200, 3*time.Millisecond)
	metrics.SearchStats(10, 4)
	metrics.CacheHit()
	metrics.CacheMiss()
	metrics.ErrorLimited()
	r = do(t, h, "GET", "/metrics", "")
	if r.status != 200 {
		t.Fatalf("/metrics = %d", r.status)
	}
	for _, want := range []string{
		admin.MetricRequests + `{route="/search/",status="200",version="v2"} 1`,
		admin.MetricLatency + `_bucket{route="/search/",status="200",version="v2",le="0.005"} 1`,
		admin.MetricCandidates + "_count 1",
		admin.MetricVerified + "_sum 4",
		admin.MetricCache + `{result="hit"} 1`,
		admin.MetricErrorLimited + " 1",
		admin.MetricBuilds + `{result="ok",trigger="start"} 1`,
		admin.MetricBuildFailures + " 0",
		admin.MetricBuildDuration,
		admin.MetricGeneration + " 1",
		admin.MetricDocuments + `{category="solar_system"} 2`,
		"go_goroutines",
	} {
		if !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestReindex(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr, data := openManagerIn(t, metrics)
	small := snapshot(t, 0)
	big := snapshot(t, 30)
	h := admin.New(admin.Options{Indexer: mgr, Snapshot: big, Metrics: metrics, Logger: zerolog.New(io.Discard)})
	// Holding the data directory's build lock (as a gds index would) keeps
	// the first build waiting, so the second request surely finds it
	// running.
	lock, ok, err := disk.TryLock(filepath.Join(data, "build.lock"), 0o600)
	if err != nil || !ok {
		t.Fatalf("build lock: %v %v", ok, err)
	}

	var first, second admin.ReindexResponse
	r := do(t, h, "POST", "/admin/reindex", "")
	r.decode(t, &first)
	if r.status != 202 || first.BuildID == "" || first.Coalesced || first.Snapshot != big {
		t.Fatalf("first reindex = %d %s", r.status, r.body)
	}
	r = do(t, h, "POST", "/admin/reindex", fmt.Sprintf(`{"snapshot": %q, "full": true}`, small))
	r.decode(t, &second)
	if r.status != 202 || !second.Coalesced || second.BuildID != first.BuildID {
		t.Fatalf("second reindex while the first runs = %d %s, want coalesced into %s", r.status, r.body, first.BuildID)
	}
	// The status shows the build in progress, then its result.
	var st indexer.Status
	do(t, h, "GET", "/admin/status", "").decode(t, &st)
	if st.Building == nil || st.Building.ID != first.BuildID || st.Building.Trigger != "admin" {
		t.Errorf("status during the build: building = %+v", st.Building)
	}
	lock.Unlock()
	deadline := time.Now().Add(time.Minute)
	for {
		st = indexer.Status{}
		do(t, h, "GET", "/admin/status", "").decode(t, &st)
		if st.Building == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.LastBuild == nil || st.LastBuild.ID != first.BuildID || !st.LastBuild.OK() || st.Live == nil || st.Live.Snapshot != big {
		t.Errorf("after the build: %+v", st)
	}

	for _, tc := range []struct{ body, want string }{
		{`{"snapshot": 5}`, "JSON"},
		{`{"snapshots": "x"}`, "JSON"},
		{`{"snapshot": "/does/not/exist"}`, "manifest"},
	} {
		r := do(t, h, "POST", "/admin/reindex", tc.body)
		if r.status != 400 || !bytes.Contains(r.body, []byte(tc.want)) {
			t.Errorf("reindex %s = %d %s, want 400 mentioning %q", tc.body, r.status, r.body, tc.want)
		}
	}
	if r := do(t, h, "GET", "/admin/reindex", ""); r.status != 405 {
		t.Errorf("GET /admin/reindex = %d, want 405", r.status)
	}
	big2 := strings.Repeat(" ", 70<<10) + "{}"
	if r := do(t, h, "POST", "/admin/reindex", big2); r.status != 413 {
		t.Errorf("oversized body = %d, want 413", r.status)
	}
}

func TestQuery(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	h := admin.New(admin.Options{Indexer: mgr, Analysts: analyst.New(mgr), Metrics: metrics, Logger: zerolog.New(io.Discard)})
	if r := do(t, h, "GET", "/admin/query?q=name:jita", ""); r.status != 503 {
		t.Errorf("query before a generation = %d, want 503", r.status)
	}
	indexertest.Build(t, mgr, indexer.BuildRequest{Snapshot: snapshot(t, 0), Trigger: "test"})
	var res analyst.Result
	r := do(t, h, "GET", "/admin/query?q=words:jita", "")
	r.decode(t, &res)
	if r.status != 200 || res.Generation != 1 || len(res.Hits) != 2 || res.Total != 2 {
		t.Fatalf("words:jita = %d %s", r.status, r.body)
	}
	r = do(t, h, "GET", "/admin/query?q=words:jita&category=solar_system&limit=5", "")
	res = analyst.Result{}
	r.decode(t, &res)
	if len(res.Hits) != 1 || res.Hits[0].ID != 30000142 || res.Hits[0].Name != "Jita" || res.Hits[0].Category != snapshots.CategorySolarSystem {
		t.Errorf("words:jita in solar_system = %s", r.body)
	}
	r = do(t, h, "GET", "/admin/query?q=name:nothing", "")
	if r.status != 200 || !bytes.Contains(r.body, []byte(`"hits":[]`)) {
		t.Errorf("no hits = %d %s", r.status, r.body)
	}
	// Facets, sort and stored fields over HTTP.
	r = do(t, h, "GET", "/admin/query?q=*&category=solar_system&facets=constellation_id&fields=constellation_id&sort=-constellation_id", "")
	res = analyst.Result{}
	r.decode(t, &res)
	if r.status != 200 || len(res.Hits) != 2 || res.Hits[0].ID != 30002187 || res.Hits[0].Fields["constellation_id"] != float64(20000322) ||
		len(res.Facets) != 1 || len(res.Facets[0].Buckets) != 2 || res.Facets[0].Buckets[0].Count != 1 {
		t.Errorf("facets, fields and sort = %d %s", r.status, r.body)
	}
	// Exports, parsed back.
	r = do(t, h, "GET", "/admin/query?q=*&format=csv&fields=corporation_id&category=character", "")
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	if r.status != 200 || err != nil || len(rows) != 2 || rows[1][0] != "90000001" || rows[1][4] != "98000001" ||
		r.header.Get("Content-Type") != "text/csv; charset=utf-8" || r.header.Get("X-Total-Hits") != "1" {
		t.Errorf("csv = %d %v %q %v", r.status, r.header, r.body, err)
	}
	r = do(t, h, "GET", "/admin/query?q=*&format=jsonl&sort=id", "")
	var ids []int64
	for line := range strings.Lines(string(r.body)) {
		var hit analyst.Hit
		if err := json.Unmarshal([]byte(line), &hit); err != nil {
			t.Fatalf("jsonl line %q: %v", line, err)
		}
		ids = append(ids, hit.ID)
	}
	if r.status != 200 || fmt.Sprint(ids) != "[30000142 30002187 90000001]" || r.header.Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("jsonl = %d %v %s", r.status, r.header, r.body)
	}
	for _, tc := range []struct{ target, want string }{
		{"/admin/query", "Parameter q is required"},
		{"/admin/query?q=name:jita&limit=0", "Parameter limit"},
		{"/admin/query?q=name:jita&limit=x", "Parameter limit"},
		{"/admin/query?q=name:jita&limit=5000", "limit must be from 1 to 1000"},
		{"/admin/query?q=name:jita&category=planet", `unknown category "planet"`},
		{`/admin/query?q=name:"open`, "bad query"},
		{"/admin/query?q=colour:red", `no field "colour"; valid: name, words, id`},
		{"/admin/query?q=*&facets=colour", `cannot facet on "colour"; valid: corporation_id`},
		{"/admin/query?q=*&sort=words", `cannot sort by "words"`},
		{"/admin/query?q=*&fields=name_de", `no stored field "name_de"`},
		{"/admin/query?q=*&format=xml", "Parameter format must be one of json, csv, jsonl"},
		{"/admin/query?q=*&format=csv&facets=state", "facets are not exported"},
		{"/admin/query?q=*&colour=red", `Unknown parameter "colour"`},
	} {
		r := do(t, h, "GET", tc.target, "")
		var e struct{ Error string }
		r.decode(t, &e)
		if r.status != 400 || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s = %d %s, want 400 with an error containing %q", tc.target, r.status, r.body, tc.want)
		}
	}
	// The field list for the console and scripts.
	var fl struct {
		Fields []indexer.AnalystField `json:"fields"`
	}
	r = do(t, h, "GET", "/admin/fields", "")
	r.decode(t, &fl)
	if r.status != 200 || len(fl.Fields) != len(analyst.Fields()) {
		t.Errorf("/admin/fields = %d %s", r.status, r.body)
	}
}

// The console's page and assets are served with a strict CSP and without
// the token (they hold no data); the routes they call need it.
func TestConsoleAssets(t *testing.T) {
	h := admin.New(admin.Options{Indexer: openManager(t, nil), Token: "s3cret", Logger: zerolog.New(io.Discard)})
	for _, tc := range []struct{ path, ctype, contains string }{
		{"/admin/", "text/html; charset=utf-8", `<script src="/admin/console.js" defer></script>`},
		{"/admin/console.js", "text/javascript; charset=utf-8", "sessionStorage"},
		{"/admin/console.css", "text/css; charset=utf-8", ".bar"},
	} {
		r := do(t, h, "GET", tc.path, "")
		if r.status != 200 || r.header.Get("Content-Type") != tc.ctype || !bytes.Contains(r.body, []byte(tc.contains)) {
			t.Errorf("%s = %d %v", tc.path, r.status, r.header)
		}
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") ||
			r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s headers %v", tc.path, r.header)
		}
	}
	if r := do(t, h, "GET", "/admin", ""); r.status != 301 || r.header.Get("Location") != "/admin/" {
		t.Errorf("/admin = %d %v", r.status, r.header)
	}
	for _, path := range []string{"/admin/fields", "/admin/query?q=*"} {
		if r := do(t, h, "GET", path, ""); r.status != 401 {
			t.Errorf("%s without the token = %d", path, r.status)
		}
		if r := do(t, h, "GET", path, "", "Authorization", "Bearer s3cret"); r.status == 401 {
			t.Errorf("%s with the token = %d", path, r.status)
		}
	}
}

func TestToken(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	h := admin.New(admin.Options{Indexer: mgr, Metrics: metrics, Token: "s3cret", Logger: zerolog.New(io.Discard)})
	for _, tc := range []struct {
		target string
		auth   string
		want   int
	}{
		{"/healthz", "", 200},
		{"/readyz", "", 503},
		{"/metrics", "", 401},
		{"/admin/status", "", 401},
		{"/admin/status", "Bearer wrong", 401},
		{"/admin/status", "s3cret", 401},
		{"/admin/status", "Basic s3cret", 401},
		{"/admin/status", "Bearer s3cret", 200},
		{"/admin/status", "bearer s3cret", 200},
		{"/metrics", "Bearer s3cret", 200},
		{"/debug/pprof/", "", 401},
		{"/debug/pprof/", "Bearer s3cret", 200},
		{"/debug/pprof/goroutine?debug=1", "Bearer s3cret", 200},
		{"/debug/pprof/heap", "", 401},
	} {
		r := do(t, h, "GET", tc.target, "", "Authorization", tc.auth)
		if r.status != tc.want {
			t.Errorf("%s with %q = %d, want %d", tc.target, tc.auth, r.status, tc.want)
		}
		if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.target)
		}
	}
	if r := do(t, h, "POST", "/admin/reindex", ""); r.status != 401 {
		t.Errorf("reindex without token = %d", r.status)
	}
}

func TestCheckExposure(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:9090", "", true},
		{"localhost:9090", "", true},
		{"[::1]:9090", "", true},
		{"127.0.0.2:9090", "", true},
		{":9090", "", false},
		{"0.0.0.0:9090", "", false},
		{"[::]:9090", "", false},
		{"10.0.0.5:9090", "", false},
		{"example.com:9090", "", false},
		{"nonsense", "", false},
		{":9090", "tok", true},
		{"0.0.0.0:9090", "tok", true},
	} {
		err := admin.CheckExposure(tc.addr, tc.token)
		if (err == nil) != tc.ok {
			t.Errorf("CheckExposure(%q, %q) = %v, want ok=%v", tc.addr, tc.token, err, tc.ok)
		}
	}
}

func TestLogsRedactToken(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	var buf bytes.Buffer
	h := admin.New(admin.Options{Indexer: mgr, Metrics: metrics, Token: "s3cret-admin", Logger: zerolog.New(&buf)})
	do(t, h, "GET", "/admin/status?token=s3cret-query", "", "Authorization", "Bearer s3cret-admin", "X-Request-Id", "req-42")
	do(t, h, "GET", "/admin/status", "", "Authorization", "Bearer s3cret-wrong")
	logs := buf.String()
	if strings.Contains(logs, "s3cret") {
		t.Errorf("logs contain a secret:\n%s", logs)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(logs, "\n", 2)[0]), &line); err != nil {
		t.Fatal(err)
	}
	if line["request_id"] != "req-42" || line["route"] != "/admin/status" || line["status"] != float64(200) {
		t.Errorf("log line = %v", line)
	}
}

// TestReplicaRefusesReindex: a replica's operator port answers a reindex
// with 409 and the reason, builds nothing, and shows its fleet status.
func TestReplicaRefusesReindex(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	h := admin.New(admin.Options{Indexer: mgr, Metrics: metrics, Logger: zerolog.New(io.Discard),
		ReindexRefused: "This server is a replica", Fleet: func() any { return map[string]int{"pointer_generation": 7} }})
	r := do(t, h, "POST", "/admin/reindex", `{"snapshot": "/x"}`)
	if r.status != 409 || !bytes.Contains(r.body, []byte(`"error":"This server is a replica"`)) {
		t.Fatalf("reindex on a replica = %d %s, want 409 with the reason", r.status, r.body)
	}
	if st := mgr.Status(); st.Building != nil || st.LastBuild != nil {
		t.Fatalf("a replica started a build: %+v", st)
	}
	var rep struct {
		Fleet map[string]int `json:"fleet"`
	}
	do(t, h, "GET", "/admin/status", "").decode(t, &rep)
	if rep.Fleet["pointer_generation"] != 7 {
		t.Fatalf("status without the fleet section: %+v", rep)
	}
	if r := do(t, h, "GET", "/readyz", ""); r.status != 503 {
		t.Fatalf("/readyz before any generation = %d", r.status)
	}
}
