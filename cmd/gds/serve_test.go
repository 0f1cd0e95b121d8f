package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"gds/api/admin"
	"gds/api/apitest"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// lockedBuffer is a buffer that a running command may write to while the
// test reads it.
type lockedBuffer = apitest.Buffer

// envMap is a getenv over a fixed map: tests never see the real
// environment's GDS_* variables.
func envMap(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// opsSnapshot is a small universe for the operations tests.
func opsSnapshot(t *testing.T) string {
	t.Helper()
	return indexertest.Snapshot(t, indexertest.Records{
		snapshots.Characters: {
			&snapshots.Character{Entity: indexertest.Named(90000001, "Jita Trader"), CorporationID: 98000001},
		},
		snapshots.SolarSystems: {
			&snapshots.SolarSystem{Entity: indexertest.Named(30000142, "Jita"), ConstellationID: 20000020},
			&snapshots.SolarSystem{Entity: indexertest.Named(30002187, "Amarr"), ConstellationID: 20000322},
		},
	})
}

// runningServer is gds serve running in-process.
type runningServer struct {
	public, admin string // bound addresses
	stderr        *lockedBuffer
	cancel        context.CancelFunc
	done          chan error
}

// startServe runs gds serve with args on ephemeral loopback ports and waits
// until both listeners are up.
func startServe(t *testing.T, getenv func(string) string, args ...string) *runningServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &runningServer{stderr: &lockedBuffer{}, cancel: cancel, done: make(chan error, 1)}
	args = append([]string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}, args...)
	go func() { s.done <- run(ctx, args, getenv, io.Discard, s.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("gds serve did not stop")
		}
	})
	exited := make(chan struct{})
	go func() {
		err := <-s.done
		s.done <- err
		close(exited)
	}()
	s.public, s.admin = waitListening(t, s.stderr.String, exited)
	waitReadyz(t, s.admin, exited)
	return s
}

// waitListening waits until a gds serve writing its JSON log to out has
// logged "listening" for both listeners and returns their addresses. The
// public listener logs it once /readyz answers 200.
func waitListening(t *testing.T, out func() string, exited <-chan struct{}) (public, admin string) {
	t.Helper()
	listening := poll(3*time.Minute, func() bool {
		if public, admin = listeningAddrs(out()); public != "" && admin != "" {
			return true
		}
		failIfExited(t, exited, "gds serve exited before it listened:\n%s", out())
		return false
	})
	if !listening {
		t.Fatalf("gds serve did not listen within 3 minutes:\n%s", out())
	}
	return public, admin
}

// listeningAddrs returns the addresses of the "listening" lines of a
// gds serve's JSON log out ("" for a listener that has not logged one).
func listeningAddrs(out string) (public, admin string) {
	for _, line := range strings.Split(out, "\n") {
		var l struct{ Message, Listener, Addr string }
		if json.Unmarshal([]byte(line), &l) != nil || l.Message != "listening" {
			continue
		}
		switch l.Listener {
		case "public":
			public = l.Addr
		case "admin":
			admin = l.Addr
		}
	}
	return public, admin
}

// waitReadyz waits until the operator port at admin answers /readyz 200.
func waitReadyz(t *testing.T, admin string, exited <-chan struct{}) {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	var err error
	ready := poll(3*time.Minute, func() bool {
		var resp *http.Response
		if resp, err = client.Get("http://" + admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		failIfExited(t, exited, "gds serve exited before it was ready")
		return false
	})
	if !ready {
		t.Fatalf("gds serve not ready within 3 minutes (last: %v)", err)
	}
}

// stop cancels the server's context, as SIGTERM does, and returns what
// run returned.
func (s *runningServer) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("gds serve did not stop within 30 s")
		return nil
	}
}

func httpGet(t *testing.T, url string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	code, _, body := exchange(t, http.DefaultClient, req)
	return code, body
}

func TestServe(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	// Flags from the environment, as GDS_<FLAG>.
	s := startServe(t, envMap("GDS_SNAPSHOT", opsSnapshot(t), "GDS_DATA", data, "GDS_ADMIN_ADDR", "127.0.0.1:0",
		"GDS_SCHEDULE", "@every 1h", "GDS_BLEVE_BATCH", "3", "GDS_STORES_IN_MEMORY", "true", "GDS_REQUEST_LOG", "all"))
	if code, body := httpGet(t, "http://"+s.admin+"/readyz"); code != 200 {
		t.Errorf("/readyz = %d %s", code, body)
	}
	code, body := httpGet(t, "http://"+s.admin+"/admin/status")
	var st struct {
		Live struct {
			ID         uint64
			BleveBatch int `json:"bleve_batch"`
		}
		Schedule   struct{ Spec string }
		HeldBytes  int64        `json:"held_bytes"`
		StoresHeld bool         `json:"stores_held"`
		Build      *admin.Build `json:"build"`
	}
	// Tables (by default) and record stores (from the environment) held in memory.
	if code != 200 || json.Unmarshal(body, &st) != nil || st.Live.ID != 1 || st.Live.BleveBatch != 3 || st.Schedule.Spec != "@every 1h" ||
		st.HeldBytes <= 0 || !st.StoresHeld {
		t.Errorf("/admin/status = %d %s", code, body)
	}
	// The build gds version describes.
	if want := currentBuild(); st.Build == nil || st.Build.Version != want.Version || st.Build.GoVersion != want.GoVersion ||
		len(st.Build.Formats) != len(want.Formats) {
		t.Errorf("/admin/status build = %+v, want %+v", st.Build, want)
	}
	code, body = httpGet(t, "http://"+s.admin+"/admin/query?q=name:jita")
	if code != 200 || !strings.Contains(string(body), `"name":"Jita"`) {
		t.Errorf("/admin/query = %d %s", code, body)
	}
	code, body = httpGet(t, "http://"+s.public+"/latest/search/?search=jita&categories=solar_system&token=leaky-secret",
		"X-Request-Id", "serve-test-1")
	if code != 200 || !strings.Contains(string(body), "30000142") {
		t.Errorf("public search = %d %s", code, body)
	}
	resolvesJita(t, s.public) // the record stores held in memory
	code, body = httpGet(t, "http://"+s.admin+"/metrics")
	if code != 200 || !strings.Contains(string(body), `gds_http_requests_total{route="/search/",status="200",version="v2"} 1`) ||
		!strings.Contains(string(body), "gds_index_generation 1") || !strings.Contains(string(body), "\ngds_memory_held_bytes ") ||
		!strings.Contains(string(body), "\ngds_request_log_lines_total ") || !strings.Contains(string(body), "\ngds_request_log_dropped_total 0") ||
		!strings.Contains(string(body), `gds_build_info{goarch="`+runtime.GOARCH+`",goos="`+runtime.GOOS+`",goversion="`+runtime.Version()+`",`) {
		t.Errorf("/metrics after one search = %d\n%s", code, body)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run after cancel = %v, want nil", err)
	}
	logs := s.stderr.String()
	if strings.Contains(logs, "leaky-secret") {
		t.Error("the token query parameter reached the log")
	}
	var found bool
	for _, line := range strings.Split(logs, "\n") {
		var l struct {
			RequestID            string `json:"request_id"`
			Route, Version, Path string
			Status               int
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.RequestID == "serve-test-1" {
			found = l.Route == "/search/" && l.Version == "v2" && l.Status == 200 && strings.Contains(l.Path, "token=REDACTED")
		}
	}
	if !found {
		t.Errorf("no request line for serve-test-1 with route, version, status and a redacted path:\n%s", logs)
	}
	// A restart serves the generation on disk without building.
	s = startServe(t, envMap(), "--data", data, "--admin-addr", "127.0.0.1:0")
	if code, _ := httpGet(t, "http://"+s.admin+"/readyz"); code != 200 {
		t.Errorf("/readyz after restart = %d", code)
	}
	if strings.Contains(s.stderr.String(), "building one before serving") {
		t.Error("restart rebuilt although a generation was live")
	}
	resolvesJita(t, s.public) // the record stores mapped
}

// resolvesJita checks that the server at addr resolves Jita's ID to its
// name from the record store.
func resolvesJita(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/latest/universe/names/", "application/json", strings.NewReader("[30000142]"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"Jita"`) {
		t.Errorf("POST /universe/names/ [30000142] = %d %s", resp.StatusCode, body)
	}
}

// TestServeShutdownFinishesInFlight holds a request open across the
// cancellation: the server stops accepting but lets it finish.
func TestServeShutdownFinishesInFlight(t *testing.T) {
	s := startServe(t, envMap(), "--snapshot", opsSnapshot(t), "--data", filepath.Join(t.TempDir(), "data"),
		"--admin-addr", "127.0.0.1:0", "--shutdown-timeout", "10s")
	// A request whose body arrives slowly is in flight until the body ends.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", "http://"+s.admin+"/admin/reindex", pr)
	req.Header.Set("Content-Type", "application/json")
	type result struct {
		code int
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- result{0, err}
			return
		}
		resp.Body.Close()
		got <- result{resp.StatusCode, nil}
	}()
	fmt.Fprint(pw, `{"full": `)
	// The handler is reading the body: its goroutine shows in a dump.
	waitFor(t, "the reindex handler to run", 2*time.Minute, func() bool {
		_, dump := httpGet(t, "http://"+s.admin+"/debug/pprof/goroutine?debug=1")
		return strings.Contains(string(dump), "admin.(*handler).reindex")
	})
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop(t) }()
	waitFor(t, "the shutdown to begin", 2*time.Minute, func() bool { return strings.Contains(s.stderr.String(), "shutting down") })
	select {
	case err := <-stopped:
		t.Fatalf("serve returned (%v) while a request was in flight", err)
	default:
	}
	fmt.Fprint(pw, `false}`)
	pw.Close()
	if r := <-got; r.err != nil || r.code != http.StatusAccepted {
		t.Errorf("in-flight request: %d %v, want 202", r.code, r.err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("run = %v", err)
	}
	if _, err := http.Get("http://" + s.admin + "/healthz"); err == nil {
		t.Error("the admin port still accepts after shutdown")
	}
}

func TestServeRefuses(t *testing.T) {
	snap := opsSnapshot(t)
	tests := []struct {
		name string
		env  func(string) string
		args []string
		want string
	}{
		{"admin beyond loopback without token", envMap(),
			[]string{"--snapshot", snap, "--admin-addr", "0.0.0.0:0"}, "admin token"},
		{"admin on all interfaces without token", envMap(),
			[]string{"--snapshot", snap, "--admin-addr", ":0"}, "admin token"},
		{"missing snapshot and no generation", envMap(),
			[]string{"--snapshot", filepath.Join(t.TempDir(), "nowhere"), "--admin-addr", "127.0.0.1:0"},
			"initial build"},
		{"no snapshot at all", envMap(), []string{"--admin-addr", "127.0.0.1:0"}, "give --snapshot"},
		{"bad release day", envMap(), []string{"--release-day", "16/10/2018"}, "YYYY-MM-DD"},
		{"schedule with a time zone (the cron parser panics on this one)", envMap(),
			[]string{"--snapshot", snap, "--admin-addr", "127.0.0.1:0", "--schedule", "TZ="}, "UTC"},
		{"zero analyst idle", envMap("GDS_ANALYST_IDLE", "0s"), nil, "--analyst-idle"},
		{"bad bleve batch", envMap("GDS_BLEVE_BATCH", "2000000"), nil, "--bleve-batch"},
		{"bad schedule", envMap(), []string{"--snapshot", snap, "--admin-addr", "127.0.0.1:0", "--schedule", "often"}, "schedule"},
		{"bad log format", envMap("GDS_LOG_FORMAT", "xml"), nil, "log-format"},
		{"missing jwks file", envMap(), []string{"--snapshot", snap, "--admin-addr", "127.0.0.1:0",
			"--jwks", filepath.Join(t.TempDir(), "jwks.json")}, "--jwks"},
		{"bad env value", envMap("GDS_MAX_CONCURRENT_SEARCHES", "many"), nil, "GDS_MAX_CONCURRENT_SEARCHES"},
		{"admin token twice", envMap("GDS_ADMIN_TOKEN", "x"), []string{"--admin-token-file", tokenFile(t, "y\n")}, "not both"},
		{"empty admin token file", envMap(), []string{"--admin-token-file", tokenFile(t, " \n")}, "empty"},
		{"missing admin token file", envMap(), []string{"--admin-token-file", filepath.Join(t.TempDir(), "none")}, "--admin-token-file"},
		{"zero token lifetime", envMap("GDS_TOKEN_MAX_LIFETIME", "0s"), nil, "--token-max-lifetime"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data")}, tc.args...)
			var stderr lockedBuffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := run(ctx, args, tc.env, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %q\n%s", err, tc.want, stderr.String())
			}
		})
	}
}

// tokenFile writes content to a private file and returns its name.
func tokenFile(t *testing.T, content string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// The operator token can come from a file, so it never shows in ps.
func TestServeAdminTokenFile(t *testing.T) {
	s := startServe(t, envMap(), "--snapshot", opsSnapshot(t), "--data", filepath.Join(t.TempDir(), "data"),
		"--admin-addr", "127.0.0.1:0", "--admin-token-file", tokenFile(t, "file-secret\n"))
	if code, _ := httpGet(t, "http://"+s.admin+"/admin/status"); code != 401 {
		t.Errorf("status without token = %d, want 401", code)
	}
	if code, _ := httpGet(t, "http://"+s.admin+"/admin/status", "Authorization", "Bearer file-secret"); code != 200 {
		t.Errorf("status with the file's token = %d, want 200", code)
	}
}

// TestServeExposedAdminWithToken binds the operator port beyond loopback
// with a token from the environment: it starts, and the token is required.
func TestServeExposedAdminWithToken(t *testing.T) {
	s := startServe(t, envMap("GDS_ADMIN_TOKEN", "op-secret"), "--snapshot", opsSnapshot(t),
		"--data", filepath.Join(t.TempDir(), "data"), "--admin-addr", "0.0.0.0:0")
	port := s.admin[strings.LastIndex(s.admin, ":"):]
	base := "http://127.0.0.1" + port
	if code, _ := httpGet(t, base+"/admin/status"); code != 401 {
		t.Errorf("status without token = %d, want 401", code)
	}
	if code, _ := httpGet(t, base+"/admin/status", "Authorization", "Bearer op-secret"); code != 200 {
		t.Errorf("status with token = %d, want 200", code)
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 200 {
		t.Errorf("healthz without token = %d, want 200", code)
	}
	if strings.Contains(s.stderr.String(), "op-secret") {
		t.Error("the admin token reached the log")
	}
}

// readyzAtListening is a log writer that asks /readyz the moment the
// public listener logs "listening", while gds serve waits for the write:
// what an operator watching the log for readiness would see.
type readyzAtListening struct {
	lockedBuffer
	admin  string
	status chan int
}

// Write sees one or more whole lines: serve writes its JSON lines in
// batches.
func (w *readyzAtListening) Write(p []byte) (int, error) {
	for line := range bytes.SplitSeq(p, []byte("\n")) {
		var l struct{ Message, Listener, Addr string }
		if json.Unmarshal(line, &l) == nil && l.Message == "listening" {
			switch l.Listener {
			case "admin":
				w.admin = l.Addr
			case "public":
				code := 0
				if resp, err := http.Get("http://" + w.admin + "/readyz"); err == nil {
					resp.Body.Close()
					code = resp.StatusCode
				}
				w.status <- code
			}
		}
	}
	return w.lockedBuffer.Write(p)
}

// Once the public listener says "listening", /readyz answers 200: no 503
// window for whoever waits on that line.
func TestServeReadyWhenListening(t *testing.T) {
	w := &readyzAtListening{status: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--log-format", "json",
			"--snapshot", opsSnapshot(t), "--data", filepath.Join(t.TempDir(), "data")}, envMap(), io.Discard, w)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	select {
	case code := <-w.status:
		if code != http.StatusOK {
			t.Errorf("/readyz when the public listener logged listening = %d, want 200", code)
		}
	case err := <-done:
		done <- err
		t.Fatalf("serve exited before listening: %v\n%s", err, w.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("the public listener did not log listening within 3 minutes:\n%s", w.String())
	}
}

// The default request log keeps errors and one in 100 of the rest, says
// so on each sampled line, and counts what it dropped in /metrics.
func TestServeRequestLogSample(t *testing.T) {
	s := startServe(t, envMap("GDS_SNAPSHOT", opsSnapshot(t), "GDS_DATA", filepath.Join(t.TempDir(), "data"), "GDS_ADMIN_ADDR", "127.0.0.1:0"),
		"--request-log-slow", "0")
	for i := range 200 {
		if code, body := httpGet(t, fmt.Sprintf("http://%s/latest/search/?search=jita&categories=solar_system&n=%d", s.public, i)); code != 200 {
			t.Fatalf("search %d = %d %s", i, code, body)
		}
	}
	for range 2 {
		httpGet(t, "http://"+s.public+"/latest/search/?search=ji&categories=solar_system")
	}
	_, body := httpGet(t, "http://"+s.admin+"/metrics")
	if !strings.Contains(string(body), "\ngds_request_log_lines_total 4\n") || !strings.Contains(string(body), "\ngds_request_log_dropped_total 198\n") {
		t.Errorf("/metrics after 200 searches and 2 errors:\n%s", body)
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
	lines := map[int]int{}
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var l struct {
			Listener string
			Message  string
			Status   int
			Sampled  int
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Listener == "public" && l.Message == "request" {
			if l.Status == 200 && l.Sampled != 100 {
				t.Errorf("a sampled line without its sample: %s", line)
			}
			lines[l.Status]++
		}
	}
	if lines[200] != 2 || lines[400] != 2 {
		t.Errorf("public request lines by status %v, want 2 of 200 and 2 of 400", lines)
	}
}
