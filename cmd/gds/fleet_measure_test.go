//go:build fleet

package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gds/snapshots"
	"gds/snapshots/envtest"
)

// TestFleetMeasure measures a fleet on this machine (docs/fleet.md): the
// publish of a full generation to a versitygw bucket on loopback (bytes,
// seconds), a new replica's cold start from the bucket to answering, the
// search throughput of one and of three replicas behind HAProxy, then a
// 1%-renamed incremental generation published while the three serve: when
// each serves it, counted from the end of the indexer's build, and the
// bytes uploaded and downloaded.
// It runs only when FLEET_MEASURE_NAMES is set (make fleet-measure):
//
//	flock /tmp/gds-heavy.lock make fleet-measure FLEET_MEASURE_NAMES=1000000
func TestFleetMeasure(t *testing.T) {
	n := envtest.Getenv(t, "how many names to measure with", "FLEET_MEASURE_NAMES")[0]
	load := 20 * time.Second
	if s := os.Getenv("FLEET_MEASURE_LOAD"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		load = d
	}
	vgw := fleetTool(t, "versitygw", "VERSITYGW")
	haproxy := fleetTool(t, "haproxy", "HAPROXY")
	fleetEnv(t)
	work := t.TempDir()
	if w := os.Getenv("FLEET_MEASURE_WORK"); w != "" {
		work = w
	}
	bin := faultBinary(t)

	// FLEET_MEASURE_SNAPSHOT reuses a snapshot made earlier (a 10M one
	// takes minutes to generate); otherwise it is generated into work.
	snap := filepath.Join(work, "snap")
	if s := os.Getenv("FLEET_MEASURE_SNAPSHOT"); s != "" {
		snap = s
	}
	if _, err := os.Stat(filepath.Join(snap, snapshots.ManifestName)); err != nil {
		var chars int
		fmt.Sscan(n, &chars)
		out, err := exec.Command(bin, "generate", "--characters", n, "--corporations", fmt.Sprint(chars/20),
			"--alliances", fmt.Sprint(chars/500), "--structures", fmt.Sprint(chars/50), "--seed", "1", "--zstd", "--out", snap).CombinedOutput()
		if err != nil {
			t.Fatalf("gds generate: %v\n%s", err, out)
		}
	}
	renamed := filepath.Join(work, "snap-renamed")
	if _, err := os.Stat(filepath.Join(renamed, snapshots.ManifestName)); err != nil {
		if err := renameShare(t, snap, renamed, 100); err != nil {
			t.Fatal(err)
		}
	}

	// The full publish's result is kept with the bucket and the indexer's
	// data in work: a run that failed later (replicas, load) is retried
	// without building again, unless the incremental was published too.
	s3 := &s3Server{bin: vgw, dir: filepath.Join(work, "s3"), addr: freeAddr(t)}
	published := filepath.Join(work, "published.txt")
	incrDone := filepath.Join(work, "incremental-published")
	idxData := filepath.Join(work, "indexer")
	prev, err := os.ReadFile(published)
	if _, ierr := os.Stat(incrDone); err != nil || ierr == nil {
		prev = nil
		os.RemoveAll(s3.dir)
		os.RemoveAll(idxData)
		os.Remove(incrDone)
	}
	if err := os.MkdirAll(filepath.Join(s3.dir, "gds"), 0o755); err != nil {
		t.Fatal(err)
	}
	s3.start(t)
	bucket := "s3://gds?region=us-east-1&use_path_style=true&endpoint=" + url.QueryEscape("http://"+s3.addr)

	var report strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&report, format, a...) }
	p("fleet measurements, %s names, %s\n", n, time.Now().UTC().Format(time.DateOnly))
	var full indexPublish
	if prev != nil {
		if err := json.Unmarshal(prev, &full); err != nil {
			t.Fatalf("%s: %v", published, err)
		}
	} else {
		full = publishStep(t, bin, bucket, idxData, snap)
		raw, _ := json.Marshal(full)
		os.WriteFile(published, raw, 0o644)
	}
	p("%s\n", full.line("full"))

	// Cold start from an empty disk, then two more replicas. Those two
	// start with replica1's files hard-linked into their download
	// directory: the follower checks each file's SHA-256 and keeps it, so
	// they serve the same generation without 2 × the generation on disk,
	// and the three share one page cache (on one machine; separate
	// machines would each download as replica1 did).
	var replicas []*fleetNode
	for i := range 3 {
		data := filepath.Join(work, fmt.Sprintf("replica%d", i+1))
		os.RemoveAll(data)
		if i > 0 {
			seedReplica(t, replicas[0], data)
		}
		start := time.Now()
		// At info, which startFleetNode reads the ports from ("listening");
		// requests are logged only when they fail.
		r := startFleetNode(t, fmt.Sprintf("replica%d", i+1), "serve", "--follow", bucket, "--follow-interval", "2s", "--data", data,
			"--request-log", "errors")
		r.waitReady(t, 30*time.Minute)
		if i == 0 {
			ready := time.Since(start)
			waitFor(t, "replica1 answering a search", time.Minute, func() bool {
				code, _ := fleetGetStatus(t, "http://"+r.public+"/latest/search/?categories=character&search=abc")
				return code == http.StatusOK
			})
			d := r.status(t).Fleet.Follow.LastDownload
			p("cold start of a new replica from the bucket (empty disk): %.1fs to /readyz 200, %.1fs to a search answered 200 (process start, download of %.1f MiB, open)\n",
				ready.Seconds(), time.Since(start).Seconds(), mib(d.Fetched))
		}
		replicas = append(replicas, r)
	}
	terms := searchTerms(200)
	for _, k := range []int{1, 3} {
		lb := startHAProxy(t, haproxy, filepath.Join(work), replicas[:k])
		before := requestCounts(t, replicas[:k])
		total, failed := hammer("http://"+lb, terms, 16, load)
		after := requestCounts(t, replicas[:k])
		var per []string
		for i := range k {
			per = append(per, fmt.Sprintf("%.0f", float64(after[i]-before[i])/load.Seconds()))
		}
		p("throughput, %d replica(s) behind HAProxy: %.0f searches/s (%d failed); per replica %s/s\n",
			k, float64(total)/load.Seconds(), failed, strings.Join(per, ", "))
	}
	var rss []string
	for _, r := range replicas {
		raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.proc.cmd.Process.Pid))
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rss = append(rss, strings.TrimSpace(v))
			}
		}
	}
	p("replica resident memory after the load: %s (mapped index files shared through the page cache count in each)\n", strings.Join(rss, ", "))

	catchUp(t, bin, bucket, idxData, renamed, full, replicas, p)
	os.WriteFile(incrDone, nil, 0o644)
	t.Log("\n" + report.String())
	if out := os.Getenv("FLEET_MEASURE_OUT"); out != "" {
		os.WriteFile(out, []byte(report.String()), 0o644)
	}
}

// indexPublish is what `gds index --publish --json` reports, with when
// the command started and returned.
type indexPublish struct {
	Build struct {
		Finished    time.Time `json:"finished"`
		Duration    float64   `json:"duration"`
		Incremental bool      `json:"incremental"`
		Changed     int       `json:"changed"`
	} `json:"build"`
	Publish struct {
		Generation    uint64  `json:"generation"`
		Duration      float64 `json:"duration"`
		Files         int     `json:"files"`
		Bytes         int64   `json:"bytes"`
		Uploaded      int     `json:"uploaded"`
		UploadedBytes int64   `json:"uploaded_bytes"`
	} `json:"publish"`
	Wall float64 `json:"wall"` // seconds, the whole command
}

func (r indexPublish) line(name string) string {
	pb := r.Publish
	return fmt.Sprintf("publish %-24s build %6.1fs  publish %6.2fs  generation %5d files %8.1f MiB  uploaded %5d objects %8.1f MiB  (gds index %.1fs)",
		name, r.Build.Duration, pb.Duration, pb.Files, mib(pb.Bytes), pb.Uploaded, mib(pb.UploadedBytes), r.Wall)
}

// publishStep builds snap into idxData with gds index --publish.
func publishStep(t *testing.T, bin, bucket, idxData, snap string) indexPublish {
	t.Helper()
	start := time.Now()
	out, err := exec.Command(bin, "index", "--snapshot", snap, "--data", idxData, "--publish", bucket, "--json", "--log-level", "warn").Output()
	if err != nil {
		t.Fatalf("gds index %s: %v\n%s", snap, err, out)
	}
	var res indexPublish
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	res.Wall = time.Since(start).Seconds()
	return res
}

// tryStatus is a node's /admin/status, or false (for goroutines other
// than the test's, which must not fail it).
func tryStatus(n *fleetNode) (fleetStatus, bool) {
	var st fleetStatus
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + n.admin + "/admin/status")
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	return st, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&st) == nil
}

// catchUp publishes the 1%-renamed snapshot as an incremental generation
// while the replicas serve, and reports when each served it, counted
// from the end of the indexer's build, and the bytes each moved.
func catchUp(t *testing.T, bin, bucket, idxData, renamed string, full indexPublish, replicas []*fleetNode, p func(string, ...any)) {
	t.Helper()
	type seen struct {
		at    time.Time
		bytes int64
	}
	live := make([]seen, len(replicas))
	done := make(chan struct{})
	var gen atomic.Uint64 // the incremental's generation, once known
	go func() {
		defer close(done)
		deadline := time.Now().Add(30 * time.Minute)
		for left := len(replicas); left > 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			g := gen.Load()
			for i, r := range replicas {
				if !live[i].at.IsZero() || g == 0 {
					continue
				}
				if st, ok := tryStatus(r); ok && st.Live != nil && st.Live.ID >= g {
					live[i].at = time.Now()
					if d := st.Fleet.Follow.LastDownload; d != nil {
						live[i].bytes = d.Fetched
					}
					left--
				}
			}
		}
	}()
	incr := publishStep(t, bin, bucket, idxData, renamed)
	gen.Store(incr.Publish.Generation)
	<-done
	p("%s\n", incr.line("incremental, 1% renamed"))
	p("  incremental=%v, %d records changed; uploaded %.2f%% of the full publish's bytes\n", incr.Build.Incremental, incr.Build.Changed,
		100*float64(incr.Publish.UploadedBytes)/float64(max(1, full.Publish.Bytes)))
	for i, l := range live {
		if l.at.IsZero() {
			t.Errorf("%s never served generation %d", replicas[i].name, incr.Publish.Generation)
			continue
		}
		p("  catch-up: %s live on generation %d %.1fs after the indexer's build ended, %.1f MiB downloaded (%.2f%% of a full publish)\n",
			replicas[i].name, incr.Publish.Generation, l.at.Sub(incr.Build.Finished).Seconds(), mib(l.bytes), 100*float64(l.bytes)/float64(max(1, full.Publish.Bytes)))
	}
}

// seedReplica hard-links the live generation of r into data's download
// directory for that generation.
func seedReplica(t *testing.T, r *fleetNode, data string) {
	t.Helper()
	id := r.status(t).Live.ID
	src := filepath.Join(r.data, "generations", fmt.Sprintf("%06d", id)) // as indexer names them
	dst := filepath.Join(data, "fleet", "incoming", fmt.Sprint(id))
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return os.Link(path, filepath.Join(dst, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// searchTerms are three- and four-letter searches, mostly not cached.
func searchTerms(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	const letters = "aeiouklmnrst"
	var out []string
	for range n {
		var b strings.Builder
		for range 3 + rng.IntN(2) {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		out = append(out, b.String())
	}
	return out
}

// hammer searches base with c clients for d.
func hammer(base string, terms []string, c int, d time.Duration) (total, failed int64) {
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			for j := i; time.Now().Before(end); j++ {
				resp, err := hc.Get(base + "/latest/search/?categories=character,corporation&search=" + terms[j%len(terms)])
				if err != nil {
					bad.Add(1)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return ok.Load(), bad.Load()
}

// requestCounts sums each replica's answered search requests.
func requestCounts(t *testing.T, replicas []*fleetNode) []int64 {
	t.Helper()
	var out []int64
	for _, r := range replicas {
		_, body := fleetGetStatus(t, "http://"+r.admin+"/metrics")
		var sum int64
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "gds_http_requests_total{") && strings.Contains(line, `route="/search/"`) {
				var v float64
				fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
				sum += int64(v)
			}
		}
		out = append(out, sum)
	}
	return out
}
