//go:build fleet

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

// TestFleet runs a fleet of real processes on loopback: a Versity S3
// gateway (versitygw, over a directory) as the bucket, one gds indexer
// publishing to it, three gds replicas following it and HAProxy balancing
// round robin over them, while a client searches through HAProxy.
//
// Phase 1: the indexer publishes five new generations (full and
// incremental). No request fails, every answer comes from exactly one
// generation (each holds one marker name, and the answer's Last-Modified is
// that generation's), every replica is on each new generation within 30 s
// of its publication, and every replica sends the same ETag and
// Last-Modified as the indexer.
//
// Phase 2, faults: a replica killed with SIGKILL in the middle of a
// download (its object reads go through a proxy in the test that stalls
// them) restarts serving its previous generation and finishes; a corrupted
// object is refused while the previous generation serves; the S3 server
// stopped for FLEET_OUTAGE (default 20 s) changes nothing that serves, and
// the fleet catches up once it is back.
//
//	make test-fleet                        installs versitygw and HAProxy when missing
//	FLEET_NAMES=200000 FLEET_OUTAGE=1m make test-fleet
func TestFleet(t *testing.T) {
	vgw := fleetTool(t, "versitygw", "VERSITYGW")
	haproxy := fleetTool(t, "haproxy", "HAPROXY")
	names := fleetEnvInt(t, "FLEET_NAMES", 20000)
	outage := 20 * time.Second
	if s := os.Getenv("FLEET_OUTAGE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("FLEET_OUTAGE=%q: want a duration", s)
		}
		outage = d
	}
	fleetEnv(t)
	t.Setenv("GDS_LOG_LEVEL", "info")
	work := t.TempDir()

	s3 := &s3Server{bin: vgw, dir: filepath.Join(work, "s3"), addr: freeAddr(t)}
	if err := os.MkdirAll(filepath.Join(s3.dir, "gds"), 0o755); err != nil { // the bucket
		t.Fatal(err)
	}
	s3.start(t)
	bucket := func(endpoint string) string {
		return "s3://gds?region=us-east-1&use_path_style=true&endpoint=" + url.QueryEscape("http://"+endpoint)
	}
	stall := &stallProxy{target: s3.addr}
	stallAddr := stall.start(t)

	w := newFleetWorld(names)
	idx := startFleetNode(t, "indexer", "serve", "--snapshot", w.snapshot(t, 1), "--data", filepath.Join(work, "indexer"),
		"--publish", bucket(s3.addr), "--publish-keep", "3")
	idx.waitReady(t, 3*time.Minute)
	idx.waitPublished(t, 1, time.Minute)
	var replicas []*fleetNode
	for i := range 3 {
		u := bucket(s3.addr)
		if i == 2 {
			u = bucket(stallAddr) // the replica whose downloads the faults stall
		}
		replicas = append(replicas, startFleetNode(t, fmt.Sprintf("replica%d", i+1), "serve", "--follow", u,
			"--follow-interval", "1s", "--data", filepath.Join(work, fmt.Sprintf("replica%d", i+1))))
	}
	for _, r := range replicas {
		r.waitReady(t, 2*time.Minute)
	}
	lb := startHAProxy(t, haproxy, work, replicas)

	// Replicas refuse to build.
	if code, body := fleetPost(t, "http://"+replicas[0].admin+"/admin/reindex", ""); code != http.StatusConflict || !strings.Contains(body, "replica") {
		t.Fatalf("POST /admin/reindex on a replica = %d %s, want 409", code, body)
	}

	client := newFleetClient(t, "http://"+lb+fleetQuery, w)
	client.start(2)
	// Phase 1: five new generations, full and incremental.
	for gen := uint64(2); gen <= 6; gen++ {
		full := gen%2 == 1
		w.advance(gen, 0.01)
		publishGeneration(t, idx, w.snapshot(t, gen), gen, full)
		published := time.Now()
		for _, r := range replicas {
			r.waitLive(t, gen, published.Add(30*time.Second))
		}
		t.Logf("generation %d (full %v) on every replica %.1fs after its publication", gen, full, time.Since(published).Seconds())
	}
	client.stop(t, "phase 1")
	sameHeaders(t, idx, replicas)

	// A replica killed in the middle of a download.
	stall.arm(3) // its object reads stall after three (the metadata file's and two more)
	w.advance(7, 0.01)
	publishGeneration(t, idx, w.snapshot(t, 7), 7, true)
	r3 := replicas[2]
	waitFor(t, "replica3 stalled mid-download", time.Minute, func() bool {
		d := r3.status(t).Fleet.Follow.Download
		return d != nil && d.FilesDone >= 2 && d.FilesDone < d.Files && stall.stalled() > 0
	})
	r3.proc.kill()
	if got := readCurrent(t, r3.data); got != "6" {
		t.Fatalf("replica3's CURRENT after SIGKILL mid-download = %q, want 6", got)
	}
	stall.release()
	r3 = r3.restart(t)
	replicas[2] = r3
	r3.waitReady(t, time.Minute)
	if st := r3.status(t); st.Live == nil || st.Live.ID < 6 {
		t.Fatalf("restarted replica serves %+v", st.Live)
	}
	if m := fleetGet(t, "http://"+r3.public+fleetQuery); m.marker != markerID(6) && m.marker != markerID(7) {
		t.Fatalf("restarted replica answered marker %d", m.marker)
	}
	r3.waitLive(t, 7, time.Now().Add(time.Minute))
	if d := r3.status(t).Fleet.Follow.LastDownload; d == nil || d.Reused == 0 {
		t.Fatalf("restarted replica's download reused nothing: %+v", d)
	}

	// A corrupted object: replica3 cannot read the bucket while the others
	// take the generation; the object is damaged before it can.
	stall.fail(true)
	w.advance(8, 0.01)
	publishGeneration(t, idx, w.snapshot(t, 8), 8, false)
	for _, r := range replicas[:2] {
		r.waitLive(t, 8, time.Now().Add(30*time.Second))
	}
	path, good := s3.damageNew(t, 7, 8)
	before := r3.status(t).Fleet.Follow.Errors
	stall.fail(false)
	waitFor(t, "replica3 refusing the corrupted object", time.Minute, func() bool {
		f := r3.status(t).Fleet.Follow
		// The S3 SDK checks the CRC32 the server stored before gds checks
		// the SHA-256: either refusal says "checksum".
		return f.Errors > before && strings.Contains(f.LastError, "checksum")
	})
	if st := r3.status(t); st.Live.ID != 7 || st.Fleet.Follow.LagGenerations != 1 {
		t.Fatalf("replica3 with a corrupted object: live %d, lag %d", st.Live.ID, st.Fleet.Follow.LagGenerations)
	}
	if m := fleetGet(t, "http://"+r3.public+fleetQuery); m.marker != markerID(7) {
		t.Fatalf("replica3 answered marker %d while refusing generation 8", m.marker)
	}
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	r3.waitLive(t, 8, time.Now().Add(30*time.Second))

	// The bucket unreachable.
	client = newFleetClient(t, "http://"+lb+fleetQuery, w)
	client.start(2)
	s3.stop(t)
	outageEnd := time.Now().Add(outage)
	waitFor(t, "every replica seeing the outage", outage+time.Minute, func() bool {
		for _, r := range replicas {
			if f := r.status(t).Fleet.Follow; f.LastErrorAt.Before(f.LastSuccess) || f.LastError == "" {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Until(outageEnd))
	for _, r := range replicas {
		st := r.status(t)
		if st.Live.ID != 8 {
			t.Fatalf("%s on generation %d during the outage", r.name, st.Live.ID)
		}
		if code, _ := fleetGetStatus(t, "http://"+r.admin+"/readyz"); code != http.StatusOK {
			t.Fatalf("%s not ready during the outage: %d", r.name, code)
		}
	}
	s3.start(t)
	w.advance(9, 0.01)
	publishGeneration(t, idx, w.snapshot(t, 9), 9, false)
	published := time.Now()
	for _, r := range replicas {
		r.waitLive(t, 9, published.Add(30*time.Second))
	}
	client.stop(t, "the outage")
	sameHeaders(t, idx, replicas)
}

// fleetQuery finds the marker names: one per generation.
const fleetQuery = "/latest/search/?categories=character&search=fleetmarker"

func markerID(gen uint64) int64 { return 99000000 + int64(gen) }

func fleetEnvInt(t *testing.T, name string, def int) int {
	t.Helper()
	return envValue(t, name, def, "an integer of at least 100", func(s string) (int, bool) {
		var n int
		_, err := fmt.Sscan(s, &n)
		return n, err == nil && n >= 100
	})
}

// fleetWorld is the data the indexer builds: characters, and one marker
// character per generation.
type fleetWorld struct {
	chars  map[int64]string
	marker uint64
	next   int
}

func newFleetWorld(n int) *fleetWorld {
	w := &fleetWorld{chars: map[int64]string{}, marker: 1}
	for i := range n {
		w.chars[int64(90000001+i)] = fmt.Sprintf("Pilot %d Kari", i)
	}
	return w
}

// advance renames share of the characters and moves the marker to gen.
func (w *fleetWorld) advance(gen uint64, share float64) {
	k := max(1, int(share*float64(len(w.chars))))
	for i := range k {
		w.next++
		w.chars[int64(90000001+(w.next*7919)%len(w.chars))] = fmt.Sprintf("Renamed %d Gen %d", i, gen)
	}
	w.marker = gen
}

func (w *fleetWorld) snapshot(t *testing.T, gen uint64) string {
	t.Helper()
	recs := indexertest.Records{}
	for id, name := range w.chars {
		recs[snapshots.Characters] = append(recs[snapshots.Characters],
			&snapshots.Character{Entity: indexertest.Named(id, name), CorporationID: 98000001})
	}
	recs[snapshots.Characters] = append(recs[snapshots.Characters],
		&snapshots.Character{Entity: indexertest.Named(markerID(gen), fmt.Sprintf("Fleetmarker %d", gen)), CorporationID: 98000001})
	return indexertest.Snapshot(t, recs)
}

// damageNew flips a byte of an object generation to names and from does
// not, returning its path and good content.
func (s *s3Server) damageNew(t *testing.T, from, to uint64) (string, []byte) {
	t.Helper()
	old := s.manifest(t, from)
	for sum := range s.manifest(t, to) {
		if old[sum] {
			continue
		}
		path := filepath.Join(s.dir, "gds", "objects", sum)
		good, err := os.ReadFile(path)
		if err != nil || len(good) == 0 {
			continue
		}
		bad := append([]byte(nil), good...)
		bad[len(bad)/2] ^= 0xff
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		return path, good
	}
	t.Fatalf("generation %d has no new object", to)
	return "", nil
}

func (s *s3Server) manifest(t *testing.T, gen uint64) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.dir, "gds", "generations", fmt.Sprintf("%06d.json", gen)))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Files []struct {
			SHA256 string `json:"sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range m.Files {
		out[f.SHA256] = true
	}
	return out
}

// stallProxy stands between one replica and the S3 server. Armed, it lets
// n object reads through and holds the rest until released (a download
// cut in the middle); failing, it answers every request 503.
type stallProxy struct {
	target  string
	mu      sync.Mutex
	allow   int // object reads still let through; -1: all
	gate    chan struct{}
	failing atomic.Bool
	waiting atomic.Int64
}

func (p *stallProxy) start(t *testing.T) string {
	t.Helper()
	p.allow, p.gate = -1, make(chan struct{})
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: p.target})
	rp.ErrorLog = log.New(io.Discard, "", 0) // stalled reads cut by a SIGKILL
	// The request keeps its Host (this proxy's address): the SigV4
	// signature covers it.
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.failing.Load() {
			http.Error(w, "proxy failing on purpose", http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/objects/") {
			p.mu.Lock()
			gate := p.gate
			stall := p.allow == 0
			if p.allow > 0 {
				p.allow--
			}
			p.mu.Unlock()
			if stall {
				p.waiting.Add(1)
				select {
				case <-gate:
				case <-r.Context().Done():
				}
				p.waiting.Add(-1)
			}
		}
		rp.ServeHTTP(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { p.release(); srv.Close() })
	return l.Addr().String()
}

func (p *stallProxy) arm(n int) {
	p.mu.Lock()
	p.allow, p.gate = n, make(chan struct{})
	p.mu.Unlock()
}

func (p *stallProxy) stalled() int64 { return p.waiting.Load() }

func (p *stallProxy) release() {
	p.mu.Lock()
	if p.allow >= 0 {
		close(p.gate)
	}
	p.allow = -1
	p.mu.Unlock()
}

func (p *stallProxy) fail(on bool) { p.failing.Store(on) }

// fleetNode is a gds process of the fleet.
type fleetNode struct {
	name, public, admin, data string
	args                      []string
	proc                      *gdsProc
}

// The node binds ports the kernel picks and the test reads them back from
// its log: a port chosen first and bound later can be taken meanwhile (the
// test's own connections draw their local ports from the same range).
func startFleetNode(t *testing.T, name string, args ...string) *fleetNode {
	t.Helper()
	n := &fleetNode{name: name}
	for i, a := range args {
		if a == "--data" {
			n.data = args[i+1]
		}
	}
	n.proc = startProc(t, name, faultBinary(t), append(args, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0")...)
	n.public, n.admin = waitListening(t, n.proc.out.String, n.proc.exited)
	n.args = append(args, "--addr", n.public, "--admin-addr", n.admin)
	return n
}

// restart starts the node again on the same directory and ports (HAProxy
// knows them); the ports were the node's until it was killed.
func (n *fleetNode) restart(t *testing.T) *fleetNode {
	t.Helper()
	m := *n
	m.proc = startProc(t, n.name+" (restarted)", faultBinary(t), n.args...)
	return &m
}

type fleetStatus struct {
	Live *struct {
		ID      uint64    `json:"id"`
		Created time.Time `json:"created"`
	} `json:"live"`
	Fleet struct {
		Publish *struct {
			Published uint64 `json:"published_generation"`
			Last      *struct {
				Files         int    `json:"files"`
				Uploaded      int    `json:"uploaded"`
				Bytes         int64  `json:"bytes"`
				UploadedBytes int64  `json:"uploaded_bytes"`
				Error         string `json:"error"`
			} `json:"last_publish"`
		} `json:"publish"`
		Follow *struct {
			Live           uint64    `json:"live_generation"`
			Pointer        uint64    `json:"pointer_generation"`
			LagGenerations uint64    `json:"lag_generations"`
			LastError      string    `json:"last_error"`
			LastErrorAt    time.Time `json:"last_error_at"`
			LastSuccess    time.Time `json:"last_success"`
			Errors         int       `json:"errors"`
			Download       *struct {
				Files     int `json:"files"`
				FilesDone int `json:"files_done"`
			} `json:"download"`
			LastDownload *struct {
				Bytes   int64 `json:"bytes"`
				Fetched int64 `json:"fetched_bytes"`
				Reused  int64 `json:"reused_bytes"`
			} `json:"last_download"`
		} `json:"follow"`
	} `json:"fleet"`
}

func (n *fleetNode) status(t *testing.T) fleetStatus {
	t.Helper()
	var st fleetStatus
	if err := adminStatus(t, n.admin, &st); err != nil {
		t.Fatalf("%s %v", n.name, err)
	}
	return st
}

func (n *fleetNode) waitReady(t *testing.T, d time.Duration) {
	t.Helper()
	waitFor(t, n.name+" ready", d, func() bool {
		failIfExited(t, n.proc.exited, "%s exited", n.name)
		code, _ := fleetGetStatus(t, "http://"+n.admin+"/readyz")
		return code == http.StatusOK
	})
}

func (n *fleetNode) waitPublished(t *testing.T, gen uint64, d time.Duration) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s publishing generation %d", n.name, gen), d, func() bool {
		p := n.status(t).Fleet.Publish
		return p != nil && p.Published >= gen
	})
}

// waitLive waits for the node to serve gen, failing after deadline.
func (n *fleetNode) waitLive(t *testing.T, gen uint64, deadline time.Time) {
	t.Helper()
	for {
		st := n.status(t)
		if st.Live != nil && st.Live.ID >= gen {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not on generation %d in time: %+v", n.name, gen, st.Fleet.Follow)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// publishGeneration has the indexer build snapshot and waits for it to be
// published as gen.
func publishGeneration(t *testing.T, idx *fleetNode, snapshot string, gen uint64, full bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"snapshot": snapshot, "full": full})
	if code, b := fleetPost(t, "http://"+idx.admin+"/admin/reindex", string(body)); code != http.StatusAccepted {
		t.Fatalf("reindex = %d %s", code, b)
	}
	idx.waitPublished(t, gen, 3*time.Minute)
	st := idx.status(t)
	if l := st.Fleet.Publish.Last; l != nil {
		t.Logf("generation %d published: %d of %d files uploaded (%d of %d bytes)", gen, l.Uploaded, l.Files, l.UploadedBytes, l.Bytes)
	}
}

func startHAProxy(t *testing.T, bin, work string, replicas []*fleetNode) string {
	t.Helper()
	addr := freeAddr(t)
	var servers strings.Builder
	for _, r := range replicas {
		_, port, _ := net.SplitHostPort(r.admin)
		fmt.Fprintf(&servers, "  server %s %s check port %s inter 300ms fall 2 rise 1\n", r.name, r.public, port)
	}
	cfg := fmt.Sprintf(`global
  maxconn 512
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch
frontend gds
  bind %s
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /readyz
%s`, addr, servers.String())
	path := filepath.Join(work, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startProc(t, "haproxy", bin, "-db", "-f", path)
	waitFor(t, "haproxy serving", time.Minute, func() bool {
		code, _ := fleetGetStatus(t, "http://"+addr+fleetQuery)
		return code == http.StatusOK
	})
	return addr
}

// fleetClient searches through the load balancer and checks every answer.
type fleetClient struct {
	t     *testing.T
	url   string
	stopc chan struct{}
	wg    sync.WaitGroup

	mu       sync.Mutex
	answers  int
	failures []string
	modified map[int64]string // marker → Last-Modified
}

func newFleetClient(t *testing.T, url string, _ *fleetWorld) *fleetClient {
	return &fleetClient{t: t, url: url, stopc: make(chan struct{}), modified: map[int64]string{}}
}

func (c *fleetClient) start(n int) {
	for range n {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			hc := &http.Client{Timeout: 10 * time.Second}
			for {
				select {
				case <-c.stopc:
					return
				default:
				}
				c.one(hc)
			}
		}()
	}
}

func (c *fleetClient) one(hc *http.Client) {
	resp, err := hc.Get(c.url)
	if err != nil {
		c.fail(err.Error())
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		c.fail(fmt.Sprintf("%d %s %v", resp.StatusCode, body, err))
		return
	}
	var ans map[string][]int64
	if err := json.Unmarshal(body, &ans); err != nil || len(ans["character"]) != 1 {
		c.fail(fmt.Sprintf("answer from more or less than one generation: %s", body))
		return
	}
	marker, lm := ans["character"][0], resp.Header.Get("Last-Modified")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers++
	if prev, ok := c.modified[marker]; ok && prev != lm {
		c.failures = append(c.failures, fmt.Sprintf("marker %d with Last-Modified %s and %s", marker, prev, lm))
	}
	c.modified[marker] = lm
}

func (c *fleetClient) fail(s string) {
	c.mu.Lock()
	c.failures = append(c.failures, s)
	c.mu.Unlock()
}

func (c *fleetClient) stop(t *testing.T, phase string) {
	t.Helper()
	close(c.stopc)
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Logf("%s: %d answers through HAProxy, %d failed, generations seen %d", phase, c.answers, len(c.failures), len(c.modified))
	if len(c.failures) > 0 {
		t.Fatalf("%s: %d failed requests, first: %s", phase, len(c.failures), c.failures[0])
	}
	if c.answers == 0 {
		t.Fatalf("%s: no answer", phase)
	}
}

// sameHeaders checks every replica answers with the indexer's validators
// and Expires. Expires is aligned to the wall-clock minute (api/cache.go),
// so answers within one minute share it: a round that straddles a minute
// boundary is asked again.
func sameHeaders(t *testing.T, idx *fleetNode, replicas []*fleetNode) {
	t.Helper()
	for {
		start := time.Now().Truncate(time.Minute)
		want := fleetGet(t, "http://"+idx.public+fleetQuery)
		var diff string
		for _, r := range replicas {
			got := fleetGet(t, "http://"+r.public+fleetQuery)
			if got != want && diff == "" {
				diff = fmt.Sprintf("%s answers %+v, the indexer %+v", r.name, got, want)
			}
		}
		if !time.Now().Truncate(time.Minute).Equal(start) {
			continue
		}
		if diff != "" {
			t.Fatal(diff)
		}
		if want.expires == "" {
			t.Fatal("no Expires")
		}
		t.Logf("every replica: ETag %s, Last-Modified %s, Expires %s", want.etag, want.modified, want.expires)
		return
	}
}

type fleetAnswer struct {
	marker                  int64
	etag, modified, expires string
}

func fleetGet(t *testing.T, u string) fleetAnswer {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans map[string][]int64
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || len(ans["character"]) != 1 {
		t.Fatalf("GET %s: %d %v %v", u, resp.StatusCode, ans, err)
	}
	return fleetAnswer{ans["character"][0], resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"), resp.Header.Get("Expires")}
}
