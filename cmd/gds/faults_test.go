package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gds/indexer/indexertest"
	"gds/snapshots"
	"gds/snapshots/disk/disktest"
)

// The fault tests run the real gds binary and break things under it: a
// build killed with SIGKILL, corrupt snapshots given to a running server,
// a data directory that fills up mid-build, and reindexes while clients
// search. What they prove is the indexer's promise, seen from outside the
// process: a failed build changes nothing that serves.

var (
	faultBinOnce sync.Once
	faultBin     string
	faultBinErr  error

	bigOnce sync.Once
	bigDir  string
	bigErr  error
)

// faultBinary builds the gds binary once for all the fault tests: linking
// it costs seconds, and every test here needs it. It lives in its own
// temporary directory (a t.TempDir would vanish with the first test);
// directories left by earlier runs are removed when old enough not to
// belong to a run still going.
func faultBinary(t *testing.T) string {
	t.Helper()
	faultBinOnce.Do(func() {
		if old, _ := filepath.Glob(filepath.Join(os.TempDir(), "gds-faults-*")); len(old) > 0 {
			for _, dir := range old {
				if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > 6*time.Hour {
					os.RemoveAll(dir)
				}
			}
		}
		dir, err := os.MkdirTemp("", "gds-faults-*")
		if err != nil {
			faultBinErr = err
			return
		}
		faultBin = filepath.Join(dir, "gds")
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", faultBin, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			faultBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if faultBinErr != nil {
		t.Fatal(faultBinErr)
	}
	return faultBin
}

// bigSnapshot is a synthetic snapshot large enough that building it takes
// seconds and tens of megabytes (200,000 characters), generated once with
// gds generate beside the shared binary.
func bigSnapshot(t *testing.T) string {
	t.Helper()
	bin := faultBinary(t)
	bigOnce.Do(func() {
		bigDir = filepath.Join(filepath.Dir(bin), "big")
		out, err := exec.Command(bin, "generate", "--characters", "200000", "--corporations", "2000",
			"--alliances", "100", "--structures", "2000", "--seed", "2", "--out", bigDir).CombinedOutput()
		if err != nil {
			bigErr = fmt.Errorf("gds generate: %v\n%s", err, out)
		}
	})
	if bigErr != nil {
		t.Fatal(bigErr)
	}
	return bigDir
}

// gdsProc is a running gds process with its output captured.
type gdsProc struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
	err    error // what Wait returned, once exited is closed
}

func startGDS(t *testing.T, args ...string) *gdsProc {
	t.Helper()
	return startProc(t, "gds "+strings.Join(args, " "), faultBinary(t), args...)
}

// startProc starts bin (gds, or another server a test needs) with its
// output captured, JSON logs asked for, and kills it when the test ends,
// logging the end of its output (named name) if the test failed.
func startProc(t *testing.T, name, bin string, args ...string) *gdsProc {
	t.Helper()
	p := &gdsProc{cmd: exec.Command(bin, args...), out: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = append(os.Environ(), "GDS_LOG_FORMAT=json")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			out := p.out.String()
			if len(out) > 8000 {
				out = "…" + out[len(out)-8000:]
			}
			t.Logf("%s output:\n%s", name, out)
		}
	})
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *gdsProc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// wait waits up to d for the process to exit on its own.
func (p *gdsProc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(d):
		t.Fatalf("gds did not exit within %v:\n%s", d, p.out)
		return nil
	}
}

// runGDSBin runs the binary to completion.
func runGDSBin(t *testing.T, args ...string) (string, error) {
	t.Helper()
	p := startGDS(t, args...)
	err := p.wait(t, 120*time.Second)
	return p.out.String(), err
}

// faultServer is gds serve run from the binary on loopback.
type faultServer struct {
	*gdsProc
	public, admin string
	client        *http.Client
}

// serveBinary starts gds serve on data with args, without the limits a
// test's many requests from one client would run into, and waits until it
// is ready.
func serveBinary(t *testing.T, data string, args ...string) *faultServer {
	t.Helper()
	return startServeBinary(t, append([]string{"--data", data, "--error-limit", "100000", "--rate-limit", "off"}, args...)...)
}

// startServeBinary starts gds serve with args and waits until it is ready.
func startServeBinary(t *testing.T, args ...string) *faultServer {
	t.Helper()
	s := &faultServer{client: &http.Client{Timeout: 20 * time.Second}}
	// Ports the kernel picks, read back from the log: a port chosen first
	// and bound later can be taken meanwhile by anything else running.
	s.gdsProc = startGDS(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}, args...)...)
	s.public, s.admin = waitListening(t, s.out.String, s.exited)
	waitReadyz(t, s.admin, s.exited)
	return s
}

// stop sends SIGTERM and expects a clean exit.
func (s *faultServer) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("gds serve exit after SIGTERM: %v\n%s", err, s.out)
	}
}

func (s *faultServer) get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := s.client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, body
}

// search answers a public search and returns its IDs by category.
func (s *faultServer) search(t *testing.T, text, categories string) map[string][]int64 {
	t.Helper()
	status, body := s.get(t, fmt.Sprintf("http://%s/latest/search/?search=%s&categories=%s", s.public, text, categories))
	var res map[string][]int64
	if status != http.StatusOK || json.Unmarshal(body, &res) != nil {
		t.Fatalf("search %q: %d %s", text, status, body)
	}
	return res
}

// faultStatus is the part of /admin/status the tests read.
type faultStatus struct {
	Live *struct {
		ID uint64 `json:"id"`
	} `json:"live"`
	LastBuild *struct {
		ID          string `json:"build_id"`
		Generation  uint64 `json:"generation"`
		Incremental bool   `json:"incremental"`
		Error       string `json:"error"`
	} `json:"last_build"`
	Building *json.RawMessage `json:"building"`
	Failures int              `json:"failures"`
}

func (s *faultServer) status(t *testing.T) faultStatus {
	t.Helper()
	status, body := s.get(t, "http://"+s.admin+"/admin/status")
	var st faultStatus
	if status != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Fatalf("/admin/status: %d %s", status, body)
	}
	return st
}

func (s *faultServer) liveGeneration(t *testing.T) uint64 {
	t.Helper()
	st := s.status(t)
	if st.Live == nil {
		t.Fatal("/admin/status: no live generation")
	}
	return st.Live.ID
}

// reindex asks for a full build of snapshot and waits until that build
// is over, returning its outcome as /admin/status reports it.
func (s *faultServer) reindex(t *testing.T, snapshot string) faultStatus {
	t.Helper()
	return s.waitBuild(t, s.startReindex(t, snapshot, true))
}

// startReindex asks for a build of snapshot and returns its ID.
func (s *faultServer) startReindex(t *testing.T, snapshot string, full bool) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"snapshot": snapshot, "full": full})
	resp, err := s.client.Post("http://"+s.admin+"/admin/reindex", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var accepted struct {
		BuildID string `json:"build_id"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &accepted) != nil || accepted.BuildID == "" {
		t.Fatalf("POST /admin/reindex %s: %d %s", snapshot, resp.StatusCode, raw)
	}
	return accepted.BuildID
}

// waitBuild waits until the build id is over and returns its outcome as
// /admin/status reports it.
func (s *faultServer) waitBuild(t *testing.T, id string) faultStatus {
	t.Helper()
	var st faultStatus
	if !poll(90*time.Second, func() bool {
		st = s.status(t)
		return st.Building == nil && st.LastBuild != nil && st.LastBuild.ID == id
	}) {
		t.Fatalf("build %s not over after 90 s", id)
	}
	return st
}

// metric returns the value of an unlabelled metric from /metrics.
func (s *faultServer) metric(t *testing.T, name string) float64 {
	t.Helper()
	_, body := s.get(t, "http://"+s.admin+"/metrics")
	for _, line := range strings.Split(string(body), "\n") {
		var v float64
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// readCurrent returns the generation CURRENT names in data.
func readCurrent(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// leftovers lists the unfinished build directories in data.
func leftovers(t *testing.T, data string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(data, "generations", "*.building"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestFaultKillDuringBuild: gds index is killed with SIGKILL in the
// middle of writing a generation. CURRENT still names the old generation,
// a server started afterwards serves it and removes the half-written
// directory, and the next build succeeds.
func TestFaultKillDuringBuild(t *testing.T) {
	needsBinary(t)
	facts := readSample(t)
	big := bigSnapshot(t)
	data := t.TempDir()
	if out, err := runGDSBin(t, "index", "--snapshot", sampleSnapshot, "--data", data); err != nil {
		t.Fatalf("first build: %v\n%s", err, out)
	}
	old := readCurrent(t, data)

	build := startGDS(t, "index", "--snapshot", big, "--data", data, "--full")
	// Kill once the new generation's directory holds files: the build is
	// then really writing, not still reading the snapshot.
	if !poll(60*time.Second, func() bool {
		for _, dir := range leftovers(t, data) {
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				return true
			}
		}
		failIfExited(t, build.exited, "gds index finished before it could be killed: %v\n%s", build.err, build.out)
		return false
	}) {
		t.Fatal("no generations/*.building directory with files after 60 s")
	}
	build.kill()
	if ws, ok := build.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("gds index was not killed by SIGKILL: %v", build.cmd.ProcessState)
	}
	if len(leftovers(t, data)) == 0 {
		t.Fatal("the killed build left no .building directory: the test did not kill it mid-build")
	}
	if got := readCurrent(t, data); got != old {
		t.Fatalf("CURRENT = %q after the killed build, want the old %q", got, old)
	}

	// A server on the data directory serves the old generation and clears
	// the leftover. No --snapshot: it must not be able to build, only open.
	srv := serveBinary(t, data)
	if got := fmt.Sprint(srv.liveGeneration(t)); strings.TrimLeft(old, "0") != got {
		t.Errorf("live generation %s, want the old %s", got, old)
	}
	if res := srv.search(t, "jita", "solar_system"); !slices.Contains(res["solar_system"], facts.jitaID) {
		t.Errorf("search jita on the old generation: %v, want solar system %d", res, facts.jitaID)
	}
	if l := leftovers(t, data); len(l) != 0 {
		t.Errorf("gds serve left the killed build's directories: %v", l)
	}
	srv.stop(t)

	// The next build succeeds and becomes live.
	if out, err := runGDSBin(t, "index", "--snapshot", sampleSnapshot, "--data", data, "--full"); err != nil {
		t.Fatalf("build after the kill: %v\n%s", err, out)
	}
	if got := readCurrent(t, data); got == old {
		t.Errorf("CURRENT still %q after a successful build", got)
	}
	if out, err := runGDSBin(t, "query", "--data", data, "--category", "solar_system", "name:jita"); err != nil || !strings.Contains(out, fmt.Sprint(facts.jitaID)) {
		t.Errorf("gds query after the rebuild: %v\n%s", err, out)
	}
}

// copySnapshot copies the snapshot directory src to a new temporary
// directory.
func copySnapshot(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "snapshot")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// rewriteManifest applies edit to the manifest of snapshot dir.
func rewriteManifest(t *testing.T, dir string, edit func(files map[string]any)) {
	t.Helper()
	disktest.EditJSON(t, filepath.Join(dir, snapshots.ManifestName), func(m map[string]any) {
		edit(m["files"].(map[string]any))
	})
}

// resum records the SHA-256 of kind's file as it is now, so the damage
// passes the checksum and must be caught by reading.
func resum(t *testing.T, dir, kind string) {
	t.Helper()
	rewriteManifest(t, dir, func(files map[string]any) {
		f := files[kind].(map[string]any)
		raw, err := os.ReadFile(filepath.Join(dir, f["path"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(raw)
		f["sha256"] = hex.EncodeToString(sum[:])
	})
}

// damage modifies the file of kind in snapshot dir with fn.
func damage(t *testing.T, dir, kind string, fn func([]byte) []byte) {
	t.Helper()
	path := filepath.Join(dir, kind+".jsonl.gz")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFaultCorruptSnapshotReindex gives a running server broken snapshots
// through POST /admin/reindex: each build fails visibly (last_build.error,
// the failures metric), and the old generation keeps serving with nothing
// partial left behind.
func TestFaultCorruptSnapshotReindex(t *testing.T) {
	needsBinary(t)
	facts := readSample(t)
	cases := []struct {
		name    string
		corrupt func(t *testing.T, dir string)
	}{
		{"checksum mismatch", func(t *testing.T, dir string) {
			rewriteManifest(t, dir, func(files map[string]any) {
				files["characters"].(map[string]any)["sha256"] = strings.Repeat("0", 64)
			})
		}},
		{"flipped bytes", func(t *testing.T, dir string) {
			damage(t, dir, "characters", func(b []byte) []byte {
				for i := len(b) / 2; i < len(b)/2+64; i++ {
					b[i] ^= 0xff
				}
				return b
			})
		}},
		{"truncated file", func(t *testing.T, dir string) {
			damage(t, dir, "solar_systems", func(b []byte) []byte { return b[:len(b)/2] })
		}},
		{"truncated gzip, checksum matching", func(t *testing.T, dir string) {
			damage(t, dir, "characters", func(b []byte) []byte { return b[:len(b)/2] })
			resum(t, dir, "characters")
		}},
		{"corrupt gzip, checksum matching", func(t *testing.T, dir string) {
			damage(t, dir, "roles", func(b []byte) []byte {
				for i := len(b) / 3; i < len(b)/3+32; i++ {
					b[i] ^= 0x5a
				}
				return b
			})
			resum(t, dir, "roles")
		}},
		{"record count wrong", func(t *testing.T, dir string) {
			rewriteManifest(t, dir, func(files map[string]any) {
				files["solar_systems"].(map[string]any)["records"] = 1
			})
		}},
		{"file missing", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "types.jsonl.gz")); err != nil {
				t.Fatal(err)
			}
		}},
	}

	data := t.TempDir()
	srv := serveBinary(t, data, "--snapshot", sampleSnapshot)
	live := srv.liveGeneration(t)
	generations, _ := filepath.Glob(filepath.Join(data, "generations", "*"))
	for i, c := range cases {
		bad := copySnapshot(t, sampleSnapshot)
		c.corrupt(t, bad)
		st := srv.reindex(t, bad)
		if st.LastBuild.Error == "" {
			t.Errorf("%s: the build succeeded (generation %d)", c.name, st.LastBuild.Generation)
		} else {
			t.Logf("%s: %s", c.name, st.LastBuild.Error)
		}
		if st.Live == nil || st.Live.ID != live {
			t.Fatalf("%s: live generation %+v, want still %d", c.name, st.Live, live)
		}
		if got := srv.metric(t, "gds_index_build_failures_total"); got != float64(i+1) {
			t.Errorf("%s: gds_index_build_failures_total = %v, want %d", c.name, got, i+1)
		}
		if res := srv.search(t, "jita", "solar_system"); !slices.Contains(res["solar_system"], facts.jitaID) {
			t.Errorf("%s: search jita after the failed build: %v", c.name, res)
		}
		if now, _ := filepath.Glob(filepath.Join(data, "generations", "*")); !slices.Equal(now, generations) {
			t.Errorf("%s: generations %v after the failed build, want %v", c.name, now, generations)
		}
	}
	if st := srv.status(t); st.Failures != len(cases) {
		t.Errorf("/admin/status failures = %d, want %d", st.Failures, len(cases))
	}
	srv.stop(t)
}

// TestFaultDiskFull builds into a data directory on a small tmpfs: the
// sample fits, the big snapshot does not. The big build fails with
// ENOSPC, the old generation keeps serving, the failed build's files are
// removed (so the space is back) and after a restart the last good
// generation serves.
func TestFaultDiskFull(t *testing.T) {
	needsBinary(t)
	if runtime.GOOS != "linux" {
		t.Skip("mounts a tmpfs: linux only")
	}
	facts := readSample(t)
	big := bigSnapshot(t)
	data := t.TempDir()
	// The sample's generation takes about 5 MB, the big one about 55 MB,
	// 27 MB of it before its analysts' indexes: the build fails before it
	// goes live.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=24M", "tmpfs", data).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): %v %s", err, bytes.TrimSpace(out))
	}
	// Registered before any process starts, so it runs after they are gone.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", data).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s (retrying lazily)", data, err, out)
			exec.Command("umount", "-l", data).Run()
		}
	})

	srv := serveBinary(t, data, "--snapshot", sampleSnapshot)
	live := srv.liveGeneration(t)
	st := srv.reindex(t, big)
	if st.LastBuild.Error == "" {
		t.Fatalf("the big build fitted in 24 MB (generation %d); the test needs a bigger snapshot", st.LastBuild.Generation)
	}
	t.Logf("big build on a 24 MB data directory: %s", st.LastBuild.Error)
	if !strings.Contains(st.LastBuild.Error, syscall.ENOSPC.Error()) {
		t.Errorf("build error %q does not say the disk is full (%q)", st.LastBuild.Error, syscall.ENOSPC.Error())
	}
	if st.Live == nil || st.Live.ID != live {
		t.Fatalf("live generation %+v after the failed build, want still %d", st.Live, live)
	}
	if res := srv.search(t, "jita", "solar_system"); !slices.Contains(res["solar_system"], facts.jitaID) {
		t.Errorf("search jita while the disk is full: %v", res)
	}
	if l := leftovers(t, data); len(l) != 0 {
		t.Errorf("the failed build left %v, holding the space", l)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(data, &fs); err != nil {
		t.Fatal(err)
	}
	if free := fs.Bavail * uint64(fs.Bsize); free < 16<<20 {
		t.Errorf("only %d bytes free after the failed build: its files were not removed", free)
	}
	srv.stop(t)

	// Restart: the last good generation serves, and a build that fits works.
	srv = serveBinary(t, data, "--snapshot", sampleSnapshot)
	if got := srv.liveGeneration(t); got != live {
		t.Errorf("after restart generation %d is live, want %d", got, live)
	}
	if res := srv.search(t, "jita", "solar_system"); !slices.Contains(res["solar_system"], facts.jitaID) {
		t.Errorf("search jita after restart: %v", res)
	}
	if st := srv.reindex(t, copySnapshot(t, sampleSnapshot)); st.LastBuild.Error != "" || st.Live == nil || st.Live.ID == live {
		t.Errorf("a build that fits, after the failure: %+v %+v", st.LastBuild, st.Live)
	}
	srv.stop(t)
}

// TestFaultReindexUnderLoad: clients search while the server reindexes
// back and forth between two snapshots. Every answer is 200 and exactly
// the answer of one of the two, and after each reindex the new one is
// what clients get.
func TestFaultReindexUnderLoad(t *testing.T) {
	needsBinary(t)
	// Two universes whose "zorg" characters differ: A has 0..39, B 20..69,
	// so the answer tells which generation served it.
	universe := func(from, to int) (string, []int64) {
		var recs []snapshots.Record
		var want []int64
		for i := from; i < to; i++ {
			id := int64(90000000 + i)
			recs = append(recs, &snapshots.Character{Entity: indexertest.Named(id, fmt.Sprintf("Zorg Pilot %03d", i)), CorporationID: 98000001})
			want = append(want, id)
		}
		// Filler, so each build takes long enough for searches to overlap it.
		for i := range 5000 {
			recs = append(recs, &snapshots.Character{Entity: indexertest.Named(int64(91000000+i), fmt.Sprintf("Filler Pilot %d", i)), CorporationID: 98000001})
		}
		return indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: recs}), want
	}
	snapA, wantA := universe(0, 40)
	snapB, wantB := universe(20, 70)
	answer := func(body []byte) (string, error) {
		var res map[string][]int64
		if err := json.Unmarshal(body, &res); err != nil {
			return "", err
		}
		got := slices.Clone(res["character"])
		slices.Sort(got)
		switch {
		case len(res) == 1 && slices.Equal(got, wantA):
			return "A", nil
		case len(res) == 1 && slices.Equal(got, wantB):
			return "B", nil
		}
		return "", fmt.Errorf("neither snapshot's answer: %s", body)
	}

	srv := serveBinary(t, t.TempDir(), "--snapshot", snapA)
	url := "http://" + srv.public + "/latest/search/?search=zorg&categories=character"
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg       sync.WaitGroup
		requests atomic.Int64
		failures atomic.Int64
		building atomic.Bool  // a reindex is under way
		overlap  atomic.Int64 // searches answered while one was
		firstErr atomic.Value
	)
	defer func() { cancel(); wg.Wait() }() // also when a check below fails
	fail := func(err error) {
		failures.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				resp, err := srv.client.Get(url)
				if err != nil {
					fail(err)
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				requests.Add(1)
				if building.Load() {
					overlap.Add(1)
				}
				switch {
				case err != nil:
					fail(err)
				case resp.StatusCode != http.StatusOK:
					fail(fmt.Errorf("status %d: %s", resp.StatusCode, body))
				default:
					if _, err := answer(body); err != nil {
						fail(err)
					}
				}
			}
		}()
	}
	want := "A"
	for i := range 5 {
		snap := snapB
		if want = "B"; i%2 == 1 {
			snap, want = snapA, "A"
		}
		building.Store(true)
		st := srv.reindex(t, snap)
		building.Store(false)
		if st.LastBuild.Error != "" {
			t.Fatalf("reindex %d: %s", i, st.LastBuild.Error)
		}
		_, body := srv.get(t, url)
		if got, err := answer(body); err != nil || got != want {
			t.Fatalf("after reindex %d: got %q (%v), want snapshot %s's answer", i, got, err, want)
		}
	}
	cancel()
	wg.Wait()
	// overlap is logged, not asserted: how many searches land inside a
	// build depends on the machine's speed.
	t.Logf("%d searches, %d of them while a reindex ran; %d failed", requests.Load(), overlap.Load(), failures.Load())
	if failures.Load() > 0 {
		t.Fatalf("%d of %d searches failed; first: %v", failures.Load(), requests.Load(), firstErr.Load())
	}
	if requests.Load() == 0 {
		t.Fatal("no search ran during the reindexes")
	}
	srv.stop(t)
}
