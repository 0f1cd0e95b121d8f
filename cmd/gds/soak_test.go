//go:build soak

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gds/snapshots"
)

// TestSoak runs the real gds binary on loopback for SOAK_DURATION: a
// primary that serves, rebuilds (in a child process, --build-process) and
// publishes to an S3 bucket (versitygw) and a replica following that
// bucket. Traffic, paced at SOAK_LOAD (0.7)
// of the capacity measured first: searches (cached, contains, strict),
// lookups, POST /characters/affiliation/, POST /latest/local/ and GET
// /latest/suggest/ where the server has them, character searches with a
// token, some of it to the replica; beside it an error flood from distinct
// clients (X-Forwarded-For from a trusted proxy), analysts' heavy queries,
// and a reindex with 1% of the characters renamed every
// SOAK_REINDEX_EVERY. Per SOAK_WINDOW it reports RSS of both servers,
// p50/p99 of the public requests and every kind of error, writes the
// windows as JSON and a picture (SVG) to SOAK_OUT, and fails on any 5xx of
// the public routes, any request without an answer, a 420 to a client
// that made no error, a failed or missing swap (primary or replica), and
// RSS growth over 5% of the first window's.
//
//	make soak SOAK_DURATION=10m SOAK_NAMES=1000000
//	make soak SOAK_DURATION=1h SOAK_NAMES=10000000   # the hour, under flock
//
// Knobs (environment): SOAK_DURATION (10m), SOAK_NAMES (0: the committed
// sample; else characters generated), SOAK_WORK (a directory keeping the
// generated snapshots between runs), SOAK_WINDOW (5m), SOAK_REINDEX_EVERY
// (5m), SOAK_LOAD (0.7), SOAK_CLIENTS (16), SOAK_CALIBRATE (20s),
// SOAK_FLOOD_RATE (1000 distinct erring clients a second), SOAK_OUT
// (testdata/out/soak), VERSITYGW (bin/versitygw).
func TestSoak(t *testing.T) {
	cfg := soakConfigFromEnv(t)
	bin := faultBinary(t)
	snap, renamed := soakSnapshots(t, bin, cfg)
	character, names, ids := soakNames(t, snap)

	t.Setenv("AWS_ACCESS_KEY_ID", "gdssoak")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "gdssoaksecret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s3 := &s3Server{bin: fleetTool(t, "versitygw", "VERSITYGW"), dir: t.TempDir(), addr: freeAddr(t)}
	if err := os.MkdirAll(filepath.Join(s3.dir, "gds"), 0o755); err != nil {
		t.Fatal(err)
	}
	s3.start(t)
	bucket := "s3://gds?region=us-east-1&use_path_style=true&endpoint=" + url.QueryEscape("http://"+s3.addr)

	reqLog := &soakLogCounter{}
	primary := startSoakServer(t, "primary", bin, reqLog, "--snapshot", snap, "--data", filepath.Join(t.TempDir(), "primary"),
		"--publish", bucket, "--publish-keep", "3", "--trusted-proxies", "127.0.0.1/32", "--rate-limit", "off", "--build-process")
	primary.waitReady(t, 30*time.Minute)
	replica := startSoakServer(t, "replica", bin, nil, "--follow", bucket, "--follow-interval", "2s",
		"--data", filepath.Join(t.TempDir(), "replica"), "--trusted-proxies", "127.0.0.1/32", "--rate-limit", "off")
	replica.waitReady(t, 30*time.Minute)

	token := mintToken(t, bin, primary.data, character, []string{"esi-search.search_structures.v1"},
		"--ttl", (cfg.duration + time.Hour).String())
	load := newSoakLoad(t, cfg, "http://"+primary.public, "http://"+replica.public, "http://"+primary.admin,
		names, ids, character, token)

	capacity := load.calibrate(cfg.calibrate)
	rate := cfg.load * capacity
	t.Logf("capacity %.0f requests/s over %v; pacing at %.0f/s (%.0f%%), %d erring clients/s, %d clients",
		capacity, cfg.calibrate, rate, cfg.load*100, cfg.floodRate, cfg.clients)
	load.start(rate)

	var windows []soakWindow
	reindexAt := time.Now().Add(cfg.reindexEvery)
	windowEnd := time.Now().Add(cfg.window)
	end := time.Now().Add(cfg.duration)
	sample := time.NewTicker(10 * time.Second)
	defer sample.Stop()
	var rss, replicaRSS []float64
	next, gen := renamed, uint64(1)
	for now := time.Now(); now.Before(end); now = <-sample.C {
		primary.checkAlive(t)
		replica.checkAlive(t)
		rss = append(rss, primary.rss(t))
		replicaRSS = append(replicaRSS, replica.rss(t))
		if !now.Before(reindexAt) && cfg.reindexEvery > 0 {
			reindexAt = reindexAt.Add(cfg.reindexEvery)
			gen = load.reindex(primary, next, gen+1)
			next = map[string]string{snap: renamed, renamed: snap}[next]
		}
		if !now.Before(windowEnd) {
			windowEnd = windowEnd.Add(cfg.window)
			w := load.window(len(windows)+1, median(rss), maxOf(rss), median(replicaRSS), gen, primary, replica)
			windows = append(windows, w)
			t.Log(w)
			rss, replicaRSS = rss[:0], replicaRSS[:0]
		}
	}
	load.stop()
	if len(rss) > 0 {
		windows = append(windows, load.window(len(windows)+1, median(rss), maxOf(rss), median(replicaRSS), gen, primary, replica))
		t.Log(windows[len(windows)-1])
	}
	lines, bytes := reqLog.counts()
	t.Logf("request log: %d lines, %d bytes (%.0f bytes a line, %.1f lines/s at the default --request-log)",
		lines, bytes, float64(bytes)/float64(max(lines, 1)), float64(lines)/cfg.duration.Seconds())
	soakReport(t, cfg, windows)
	load.check(t, windows)

	// The replica follows to the last generation published.
	deadline := time.Now().Add(5 * time.Minute)
	for replica.generation(t) < gen && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	if g := replica.generation(t); g < gen {
		t.Errorf("the replica serves generation %d, the primary published %d", g, gen)
	}
	for _, s := range []*soakServer{primary, replica} {
		_ = s.proc.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.proc.exited:
			if err := s.proc.cmd.ProcessState; !err.Success() {
				t.Errorf("%s after SIGTERM: %v", s.name, err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("%s did not stop within 60 s of SIGTERM", s.name)
		}
	}
}

// soakConfig holds the knobs.
type soakConfig struct {
	duration, window, reindexEvery, calibrate time.Duration
	names, clients, floodRate                 int
	load                                      float64
	work, out                                 string
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	c := soakConfig{
		duration:     soakEnvDuration(t, "SOAK_DURATION", 10*time.Minute),
		window:       soakEnvDuration(t, "SOAK_WINDOW", 5*time.Minute),
		reindexEvery: soakEnvDuration(t, "SOAK_REINDEX_EVERY", 5*time.Minute),
		calibrate:    soakEnvDuration(t, "SOAK_CALIBRATE", 20*time.Second),
		names:        soakEnvInt(t, "SOAK_NAMES", 0),
		clients:      max(1, soakEnvInt(t, "SOAK_CLIENTS", 16)),
		floodRate:    soakEnvInt(t, "SOAK_FLOOD_RATE", 1000),
		load:         0.7,
		work:         os.Getenv("SOAK_WORK"),
		out:          os.Getenv("SOAK_OUT"),
	}
	if s := os.Getenv("SOAK_LOAD"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 || f > 1 {
			t.Fatalf("SOAK_LOAD=%q: want a share of capacity such as 0.7", s)
		}
		c.load = f
	}
	if c.out == "" {
		c.out = "testdata/out/soak"
	}
	if c.work == "" {
		c.work = t.TempDir()
	}
	return c
}

// soakSnapshots returns the snapshot served first and one with 1% of its
// characters renamed: reindexing to each in turn changes 1%.
func soakSnapshots(t *testing.T, bin string, cfg soakConfig) (snap, renamed string) {
	t.Helper()
	snap = "../../snapshots/sample"
	if cfg.names > 0 {
		snap = filepath.Join(cfg.work, fmt.Sprintf("snap-%d", cfg.names))
		if _, err := os.Stat(filepath.Join(snap, snapshots.ManifestName)); err != nil {
			n := cfg.names
			out, err := exec.Command(bin, "generate", "--characters", strconv.Itoa(n), "--corporations", strconv.Itoa(max(n/20, 10)),
				"--alliances", strconv.Itoa(max(n/500, 2)), "--structures", strconv.Itoa(max(n/50, 10)), "--seed", "1", "--zstd", "--out", snap).CombinedOutput()
			if err != nil {
				t.Fatalf("gds generate: %v\n%s", err, out)
			}
		}
	}
	renamed = filepath.Join(cfg.work, fmt.Sprintf("renamed-%d", cfg.names))
	if _, err := os.Stat(filepath.Join(renamed, snapshots.ManifestName)); err != nil {
		if err := renameShare(t, snap, renamed, 100); err != nil {
			t.Fatal(err)
		}
	}
	return snap, renamed
}

// soakServer is one gds serve of the soak.
type soakServer struct {
	name, public, admin, data string
	proc                      *gdsProc
	client                    *http.Client
	log                       *soakTail // the tail its output goes to
}

func startSoakServer(t *testing.T, name, bin string, reqLog *soakLogCounter, args ...string) *soakServer {
	t.Helper()
	s := &soakServer{name: name, client: &http.Client{Timeout: time.Minute}, log: &soakTail{}}
	for i, a := range args {
		if a == "--data" {
			s.data = args[i+1]
		}
	}
	// Ports the kernel picks, read back from the log (waitReady): a port
	// chosen first and bound later can be taken meanwhile.
	args = append([]string{"serve", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}, args...)
	p := &gdsProc{cmd: exec.Command(bin, args...), out: &lockedBuffer{}, exited: make(chan struct{})}
	var out io.Writer = s.log
	if reqLog != nil {
		out, s.log = reqLog, &reqLog.tail
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Env = append(soakEnv(), "GDS_LOG_FORMAT=json")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			tail := s.log.String()
			t.Logf("%s output:\n%s", name, tail[max(0, len(tail)-8000):])
		}
	})
	s.proc = p
	return s
}

// soakEnv is the environment without GDS_* variables, so a developer's
// settings do not change the soak.
func soakEnv() []string { return withoutGDSVars(os.Environ()) }

func (s *soakServer) waitReady(t *testing.T, d time.Duration) {
	t.Helper()
	waitFor(t, s.name+" ready", d, func() bool {
		s.checkAlive(t)
		// The admin listener logs at once, the public one once ready.
		if s.public, s.admin = s.log.addrs(); s.admin == "" {
			return false
		}
		code, _ := fleetGetStatus(t, "http://"+s.admin+"/readyz")
		return code == http.StatusOK && s.public != ""
	})
}

func (s *soakServer) checkAlive(t *testing.T) {
	t.Helper()
	failIfExited(t, s.proc.exited, "%s exited during the soak", s.name)
}

// rss reads the server's resident memory from /metrics.
func (s *soakServer) rss(t *testing.T) float64 {
	t.Helper()
	return soakMeasure(t, s.client, "http://"+s.admin).rss
}

// status is what the soak reads of /admin/status.
type soakStatus struct {
	Live *struct {
		ID uint64 `json:"id"`
	} `json:"live"`
	Failures int `json:"failures"`
	Fleet    struct {
		Follow *struct {
			Errors int `json:"errors"`
		} `json:"follow"`
		Publish *struct {
			Published uint64 `json:"published_generation"`
		} `json:"publish"`
	} `json:"fleet"`
}

func (s *soakServer) status(t *testing.T) soakStatus {
	t.Helper()
	var st soakStatus
	if err := adminStatus(t, s.admin, &st); err != nil {
		t.Errorf("%s %v", s.name, err)
	}
	return st
}

func (s *soakServer) generation(t *testing.T) uint64 {
	if st := s.status(t); st.Live != nil {
		return st.Live.ID
	}
	return 0
}
