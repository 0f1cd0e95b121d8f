//go:build soak

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gds/snapshots"
)

// TestSoak runs the real gds binary on loopback for SOAK_DURATION under
// mixed traffic (searches, character searches with tokens, lookups of the
// operator port, analysts' queries) with a full reindex every
// SOAK_REINDEX_EVERY, and samples memory and goroutines from /metrics.
// It fails on transport errors, on 5xx answers other than the 503s of the
// concurrency limit (more than 1% of them fails too), on the server dying,
// on an unclean SIGTERM, and on growth that looks like a leak: resident
// memory beyond twice the warmed-up value plus 64 MiB, or goroutines beyond
// the warmed-up count plus 100.
//
//	make soak SOAK_DURATION=30m
//	SOAK_DURATION=2m go test -tags soak -run TestSoak -v ./cmd/gds
//
// Knobs (environment): SOAK_DURATION (10m), SOAK_CLIENTS (8),
// SOAK_REINDEX_EVERY (1m; 0 disables), SOAK_SAMPLE_EVERY (10s),
// SOAK_SNAPSHOT (the committed sample).
func TestSoak(t *testing.T) {
	duration := soakEnvDuration(t, "SOAK_DURATION", 10*time.Minute)
	reindexEvery := soakEnvDuration(t, "SOAK_REINDEX_EVERY", time.Minute)
	sampleEvery := soakEnvDuration(t, "SOAK_SAMPLE_EVERY", 10*time.Second)
	clients := 8
	if s := os.Getenv("SOAK_CLIENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SOAK_CLIENTS=%q: want a positive integer", s)
		}
		clients = n
	}
	snapshot := os.Getenv("SOAK_SNAPSHOT")
	if snapshot == "" {
		snapshot = "../../snapshots/sample"
	}
	character, names := soakNames(t, snapshot)

	bin := soakBuild(t)
	data := t.TempDir()
	public, adminAddr := freeAddr(t), freeAddr(t)
	var logs soakTail
	srv := exec.Command(bin, "serve", "--snapshot", snapshot, "--data", data,
		"--addr", public, "--admin-addr", adminAddr, "--log-format", "json", "--log-level", "warn",
		"--rate-limit", "off") // one client at full speed
	srv.Stdout, srv.Stderr = &logs, &logs
	srv.Env = soakEnv()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() {
		if srv.ProcessState == nil {
			_ = srv.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("last server output:\n%s", logs.String())
		}
	}()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}}
	soakWaitReady(t, client, "http://"+adminAddr, exited)

	out, err := exec.Command(bin, "token", "--data", data, "--character", strconv.FormatInt(character, 10),
		"--scopes", "esi-search.search_structures.v1", "--ttl", (duration + 10*time.Minute).String()).Output()
	if err != nil {
		t.Fatalf("gds token: %v", err)
	}
	token := strings.TrimSpace(string(out))

	stats := &soakStats{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				req := soakRequest(rng, "http://"+public, "http://"+adminAddr, names, character, token)
				stats.do(client, req)
			}
		}()
	}

	start := time.Now()
	end := start.Add(duration)
	warmAt := start.Add(duration / 5)
	var warm, last soakSample
	sample := time.NewTicker(sampleEvery)
	defer sample.Stop()
	var reindex <-chan time.Time
	if reindexEvery > 0 {
		rt := time.NewTicker(reindexEvery)
		defer rt.Stop()
		reindex = rt.C
	}
	t.Logf("%8s %10s %10s %6s %9s %7s %7s %8s %8s", "elapsed", "rss_MiB", "heap_MiB", "gorout", "requests", "5xx", "503", "p50_ms", "p99_ms")
loop:
	for {
		select {
		case err := <-exited:
			t.Fatalf("server exited during the soak: %v", err)
		case <-reindex:
			resp, err := client.Post("http://"+adminAddr+"/admin/reindex", "application/json", strings.NewReader(`{"full": true}`))
			if err != nil {
				t.Errorf("reindex: %v", err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				t.Errorf("reindex: %d", resp.StatusCode)
			}
		case now := <-sample.C:
			s := soakMeasure(t, client, "http://"+adminAddr)
			p50, p99 := stats.percentiles()
			t.Logf("%8s %10.1f %10.1f %6.0f %9d %7d %7d %8.2f %8.2f", now.Sub(start).Round(time.Second),
				s.rss/(1<<20), s.heap/(1<<20), s.goroutines, stats.total.Load(), stats.serverErrors.Load(),
				stats.busy.Load(), p50, p99)
			if warm.rss == 0 && now.After(warmAt) {
				warm = s
			}
			last = s
			if now.After(end) {
				break loop
			}
		}
	}
	close(stop)
	wg.Wait()

	total, busy, fatal := stats.total.Load(), stats.busy.Load(), stats.serverErrors.Load()
	t.Logf("%d requests in %v (%.0f/s), %d answered 503, %d other 5xx, %d transport errors",
		total, duration, float64(total)/duration.Seconds(), busy, fatal, stats.transport.Load())
	if e := stats.firstError(); e != "" {
		t.Errorf("first failure: %s", e)
	}
	if fatal > 0 || stats.transport.Load() > 0 {
		t.Errorf("%d 5xx answers and %d transport errors", fatal, stats.transport.Load())
	}
	if total > 0 && busy*100 > total {
		t.Errorf("%d of %d requests answered 503: the concurrency limit is too tight for %d clients", busy, total, clients)
	}
	if total == 0 {
		t.Error("no requests were made")
	}
	if warm.rss > 0 {
		if last.rss > 2*warm.rss+64<<20 {
			t.Errorf("resident memory grew from %.0f MiB (warm) to %.0f MiB", warm.rss/(1<<20), last.rss/(1<<20))
		}
		if last.goroutines > warm.goroutines+100 {
			t.Errorf("goroutines grew from %.0f (warm) to %.0f", warm.goroutines, last.goroutines)
		}
	}

	// Every reindex must have worked, under load, and switched generations.
	var st struct {
		Live     struct{ ID uint64 }
		Failures int
	}
	if resp, err := client.Get("http://" + adminAddr + "/admin/status"); err != nil {
		t.Errorf("/admin/status: %v", err)
	} else {
		err := json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		t.Logf("live generation %d, %d failed builds", st.Live.ID, st.Failures)
		if err != nil || st.Failures > 0 || (reindexEvery > 0 && reindexEvery < duration && st.Live.ID < 2) {
			t.Errorf("indexer after the soak: %+v %v", st, err)
		}
	}

	_ = srv.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("server did not stop within 60 s of SIGTERM")
	}
}

// soakRequest picks the next request: mostly public searches, some
// character searches and operator calls.
func soakRequest(rng *rand.Rand, public, admin string, names []string, character int64, token string) *http.Request {
	cats := []string{"agent", "alliance", "character", "constellation", "corporation", "faction",
		"inventory_type", "region", "solar_system", "station"}
	text := names[rng.IntN(len(names))]
	if r := []rune(text); len(r) > 3 && rng.IntN(2) == 0 {
		// A fragment of a real name: the contains search's usual case.
		i := rng.IntN(len(r) - 2)
		text = string(r[i : i+3+rng.IntN(len(r)-i-2)])
	}
	n := 1 + rng.IntN(4)
	picked := slices.Clone(cats)
	rng.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	params := url.Values{"search": {text}, "categories": {strings.Join(picked[:n], ",")}}
	if rng.IntN(5) == 0 {
		params.Set("strict", "true")
	}
	if rng.IntN(5) == 0 {
		params.Set("language", []string{"de", "fr", "ja", "ru", "zh", "ko", "es", "en-us"}[rng.IntN(8)])
	}
	q := params.Encode()
	var req *http.Request
	switch p := rng.IntN(100); {
	case p < 75:
		req, _ = http.NewRequest("GET", public+"/latest/search/?"+q, nil)
	case p < 90:
		params.Set("categories", params.Get("categories")+",structure")
		req, _ = http.NewRequest("GET", fmt.Sprintf("%s/latest/characters/%d/search/?%s", public, character, params.Encode()), nil)
		req.Header.Set("Authorization", "Bearer "+token)
	case p < 95:
		req, _ = http.NewRequest("GET", admin+"/admin/query?limit=20&q="+url.QueryEscape("words:"+strings.Fields(names[rng.IntN(len(names))])[0]), nil)
	case p < 98:
		req, _ = http.NewRequest("GET", public+"/latest/search/?search=ab&categories=agent", nil) // a 400
	default:
		req, _ = http.NewRequest("GET", admin+"/admin/status", nil)
	}
	return req
}

// soakStats counts outcomes and keeps recent latencies.
type soakStats struct {
	total, busy, serverErrors, transport atomic.Int64

	mu      sync.Mutex
	first   string
	latency []float64 // ms, a ring of the most recent
	next    int
}

func (s *soakStats) do(c *http.Client, req *http.Request) {
	start := time.Now()
	resp, err := c.Do(req)
	d := time.Since(start)
	s.total.Add(1)
	if err != nil {
		s.transport.Add(1)
		s.fail(req.URL.Path + ": " + err.Error())
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		s.busy.Add(1)
	case resp.StatusCode >= 500:
		s.serverErrors.Add(1)
		s.fail(fmt.Sprintf("%s?%s: HTTP %d", req.URL.Path, req.URL.RawQuery, resp.StatusCode))
	}
	s.mu.Lock()
	const ring = 20000
	if len(s.latency) < ring {
		s.latency = append(s.latency, float64(d.Microseconds())/1000)
	} else {
		s.latency[s.next] = float64(d.Microseconds()) / 1000
		s.next = (s.next + 1) % ring
	}
	s.mu.Unlock()
}

func (s *soakStats) fail(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == "" {
		s.first = msg
	}
}

func (s *soakStats) firstError() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

func (s *soakStats) percentiles() (p50, p99 float64) {
	s.mu.Lock()
	l := slices.Clone(s.latency)
	s.mu.Unlock()
	if len(l) == 0 {
		return 0, 0
	}
	slices.Sort(l)
	return l[len(l)/2], l[len(l)*99/100]
}

// soakSample is one reading of the server's memory.
type soakSample struct{ rss, heap, goroutines float64 }

// soakMeasure reads the process and Go runtime gauges from /metrics.
func soakMeasure(t *testing.T, c *http.Client, admin string) soakSample {
	t.Helper()
	resp, err := c.Get(admin + "/metrics")
	if err != nil {
		t.Errorf("/metrics: %v", err)
		return soakSample{}
	}
	defer resp.Body.Close()
	var s soakSample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "process_resident_memory_bytes":
			s.rss = v
		case "go_memstats_heap_inuse_bytes":
			s.heap = v
		case "go_goroutines":
			s.goroutines = v
		}
	}
	return s
}

// soakNames reads a character ID and some names to search for from the
// snapshot.
func soakNames(t *testing.T, dir string) (character int64, names []string) {
	t.Helper()
	snap, err := snapshots.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []snapshots.Kind{snapshots.Characters, snapshots.SolarSystems, snapshots.Types, snapshots.Corporations, snapshots.Stations} {
		err := snap.Each(k, func(r snapshots.Record, _ snapshots.Line) error {
			if c, ok := r.(*snapshots.Character); ok && character == 0 {
				character = c.ID
			}
			if n, ok := r.(snapshots.Named); ok && len(names) < 5000 {
				if name := n.DisplayName(); len([]rune(name)) >= 3 {
					names = append(names, name)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if character == 0 || len(names) == 0 {
		t.Fatalf("snapshot %s has no characters or names to search for", dir)
	}
	return character, names
}

func soakBuild(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gds")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

// soakEnv is the environment without GDS_* variables, so a developer's
// settings do not change the soak.
func soakEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GDS_") {
			env = append(env, kv)
		}
	}
	return env
}

func soakWaitReady(t *testing.T, c *http.Client, admin string, exited <-chan error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		select {
		case err := <-exited:
			t.Fatalf("server exited before it was ready: %v", err)
		default:
		}
		if resp, err := c.Get(admin + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("server not ready after 5 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func soakEnvDuration(t *testing.T, key string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		t.Fatalf("%s=%q: want a duration such as 10m", key, s)
	}
	return d
}

// soakTail keeps the last 64 KiB of the server's output for a failure
// report.
type soakTail struct {
	mu sync.Mutex
	b  []byte
}

func (w *soakTail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if over := len(w.b) - 64<<10; over > 0 {
		w.b = bytes.Clone(w.b[over:])
	}
	return len(p), nil
}

func (w *soakTail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
