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
)

// TestFleetMeasure measures a fleet on this machine (docs/fleet.md): the
// publish of a full generation and of a 1%-renamed incremental one to a
// versitygw bucket on loopback, a replica's catch-up from an empty disk,
// and the search throughput of one and of three replicas behind HAProxy.
// It runs only when FLEET_MEASURE_NAMES is set (make fleet-measure):
//
//	flock /tmp/gds-heavy.lock make fleet-measure FLEET_MEASURE_NAMES=1000000
func TestFleetMeasure(t *testing.T) {
	n := os.Getenv("FLEET_MEASURE_NAMES")
	if n == "" {
		t.Skip("FLEET_MEASURE_NAMES not set")
	}
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

	// The publish results are kept with the bucket in work: a run that
	// failed later (replicas, load) is retried without building again.
	s3 := &s3Server{bin: vgw, dir: filepath.Join(work, "s3"), addr: freeAddr(t)}
	published := filepath.Join(work, "published.txt")
	prev, err := os.ReadFile(published)
	if err != nil {
		os.RemoveAll(s3.dir)
	}
	if err := os.MkdirAll(filepath.Join(s3.dir, "gds"), 0o755); err != nil {
		t.Fatal(err)
	}
	s3.start(t)
	bucket := "s3://gds?region=us-east-1&use_path_style=true&endpoint=" + url.QueryEscape("http://"+s3.addr)
	idxData := filepath.Join(work, "indexer")

	var report strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&report, format, a...) }
	p("fleet measurements, %s names, %s\n", n, time.Now().UTC().Format(time.DateOnly))
	if prev != nil {
		report.Write(prev)
	} else {
		publishMeasured(t, bin, bucket, idxData, snap, renamed, p)
		os.WriteFile(published, []byte(strings.SplitN(report.String(), "\n", 2)[1]), 0o644)
	}
	// The bucket has everything now; the indexer's copy only costs disk.
	os.RemoveAll(idxData)

	// Catch-up from an empty disk, then two more replicas. Those two start
	// with replica1's files hard-linked into their download directory: the
	// follower checks each file's SHA-256 and keeps it, so they serve the
	// same generation without 2 × the generation on disk, and the three
	// share one page cache (on one machine; separate machines would each
	// download as replica1 did).
	var replicas []*fleetNode
	for i := range 3 {
		data := filepath.Join(work, fmt.Sprintf("replica%d", i+1))
		os.RemoveAll(data)
		if i > 0 {
			seedReplica(t, replicas[0], data)
		}
		start := time.Now()
		r := startFleetNode(t, fmt.Sprintf("replica%d", i+1), "serve", "--follow", bucket, "--follow-interval", "2s", "--data", data,
			"--log-level", "warn")
		r.waitReady(t, 30*time.Minute)
		if i == 0 {
			d := r.status(t).Fleet.Follow.LastDownload
			p("catch-up from an empty disk: %.1fs to /readyz 200 (process start, download of %.1f MiB, open)\n", time.Since(start).Seconds(), mib(d.Fetched))
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
	t.Log("\n" + report.String())
	if out := os.Getenv("FLEET_MEASURE_OUT"); out != "" {
		os.WriteFile(out, []byte(report.String()), 0o644)
	}
}

// publishMeasured builds and publishes snap (full) then renamed
// (incremental) with gds index --publish, reporting each through p.
func publishMeasured(t *testing.T, bin, bucket, idxData, snap, renamed string, p func(string, ...any)) {
	os.RemoveAll(idxData)
	for _, step := range []struct{ name, snap string }{{"full", snap}, {"incremental, 1% renamed", renamed}} {
		out, err := exec.Command(bin, "index", "--snapshot", step.snap, "--data", idxData, "--publish", bucket, "--json", "--log-level", "warn").Output()
		if err != nil {
			t.Fatalf("gds index %s: %v\n%s", step.name, err, out)
		}
		var res struct {
			Build struct {
				Duration float64 `json:"duration"`
			} `json:"build"`
			Publish struct {
				Duration      float64 `json:"duration"`
				Files         int     `json:"files"`
				Bytes         int64   `json:"bytes"`
				Uploaded      int     `json:"uploaded"`
				UploadedBytes int64   `json:"uploaded_bytes"`
			} `json:"publish"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		pb := res.Publish
		p("publish %-24s build %6.1fs  publish %6.2fs  generation %5d files %8.1f MiB  uploaded %5d objects %8.1f MiB\n",
			step.name, res.Build.Duration, pb.Duration, pb.Files, mib(pb.Bytes), pb.Uploaded, mib(pb.UploadedBytes))
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
