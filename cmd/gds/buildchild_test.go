package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/api/apitest"
	"gds/indexer"
	"gds/snapshots"
	"gds/snapshots/disk"
	"gds/snapshots/synth"
)

// TestServeBuildProcess runs gds serve --build-process on the sample: a
// reindex runs in a child process of the server at nice 19; killed, it
// leaves the live generation serving and the failure in /admin/status;
// the next reindex, of a snapshot renaming some characters, is
// incremental and its generation goes live in the server.
func TestServeBuildProcess(t *testing.T) {
	needsBinary(t)
	if runtime.GOOS != "linux" {
		t.Skip("a build's priority is lowered on Linux only")
	}
	base, renamed, name, id := renamedSample(t)
	data := t.TempDir()
	srv := serveBinary(t, data, "--snapshot", base, "--build-process")
	first := srv.liveGeneration(t)

	// Holding the data directory's build lock keeps the child waiting.
	lock := holdBuildLock(t, data)
	build := srv.startReindex(t, renamed, false)
	pid := srv.childPID(t)
	stat := procStat(t, pid, "")
	if pid == srv.cmd.Process.Pid || stat.ppid != srv.cmd.Process.Pid {
		t.Fatalf("build process %d has parent %d; want a child of the server %d", pid, stat.ppid, srv.cmd.Process.Pid)
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		if nice := procStat(t, pid, filepath.Base(task)).nice; nice != buildNice {
			t.Errorf("thread %s of the build process runs at nice %d, want %d", filepath.Base(task), nice, buildNice)
		}
	}
	if len(tasks) == 0 {
		t.Error("the build process has no threads")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := srv.waitBuild(t, build)
	if st.LastBuild.Error == "" || st.Live.ID != first || st.Failures != 1 {
		t.Fatalf("after the child was killed: live %d, failures %d, last build %+v; want %d live, the failure", st.Live.ID, st.Failures, st.LastBuild, first)
	}
	t.Logf("killed child: %s", st.LastBuild.Error)
	if got := srv.search(t, url.QueryEscape(name), "character"); slices.Contains(got["character"], id) {
		t.Fatalf("search %q found the renamed character before its generation went live", name)
	}
	lock.Unlock()

	st = srv.waitBuild(t, srv.startReindex(t, renamed, false))
	if st.LastBuild.Error != "" || st.LastBuild.Generation <= first || !st.LastBuild.Incremental || st.Live.ID != st.LastBuild.Generation {
		t.Fatalf("reindex in a child: live %d, last build %+v; want an incremental generation past %d live", st.Live.ID, st.LastBuild, first)
	}
	if got := srv.search(t, url.QueryEscape(name), "character"); !slices.Contains(got["character"], id) {
		t.Fatalf("search %q after the child's generation went live: %v, want %d", name, got, id)
	}
	if out := srv.out.String(); !strings.Contains(out, `"component":"build-child"`) {
		t.Errorf("the server's log has no line of the child's:\n%s", out)
	}
}

// TestServeBuildProcessFailsAndStops: a child that fails on a broken
// snapshot leaves the live generation serving, with its error in
// /admin/status; a server that stops ends its running child.
func TestServeBuildProcessFailsAndStops(t *testing.T) {
	needsBinary(t)
	facts := readSample(t)
	data := t.TempDir()
	srv := serveBinary(t, data, "--snapshot", sampleSnapshot, "--build-process")
	first := srv.liveGeneration(t)
	bad := copySnapshot(t, sampleSnapshot)
	rewriteManifest(t, bad, func(files map[string]any) {
		files["solar_systems"].(map[string]any)["records"] = 1
	})
	st := srv.reindex(t, bad)
	if st.LastBuild.Error == "" || !strings.Contains(st.LastBuild.Error, "gds index") || st.Live.ID != first || st.Failures != 1 {
		t.Fatalf("build of a broken snapshot in a child: live %d, failures %d, last build %+v", st.Live.ID, st.Failures, st.LastBuild)
	}
	t.Logf("failed child: %s", st.LastBuild.Error)
	if got := srv.search(t, "jita", "solar_system"); !slices.Contains(got["solar_system"], facts.jitaID) {
		t.Fatalf("search jita after the failed child: %v", got)
	}

	lock := holdBuildLock(t, data)
	defer lock.Unlock()
	srv.startReindex(t, sampleSnapshot, true)
	pid := srv.childPID(t)
	srv.stop(t)
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("build process %d outlived the server: %v", pid, err)
	}
}

// renamedSample writes two copies of the sample as synth.Rename writes
// them: base, as it is, and renamed, in which every hundredth character
// is renamed (a build from one to the other is incremental). It returns
// them with one of the new names and its character's ID.
func renamedSample(t *testing.T) (base, renamed, name string, id int64) {
	t.Helper()
	snap, err := snapshots.OpenManifest(sampleSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	base, renamed = filepath.Join(t.TempDir(), "base"), filepath.Join(t.TempDir(), "renamed")
	if err := synth.Rename(snap, base, "sample", math.MaxInt64, nil); err != nil {
		t.Fatal(err)
	}
	if err := synth.Rename(snap, renamed, "sample", 100, func(n string) string { return n + " Quorvex" }); err != nil {
		t.Fatal(err)
	}
	out, err := snapshots.Open(renamed)
	if err != nil {
		t.Fatal(err)
	}
	err = out.Each(snapshots.Characters, func(r snapshots.Record, _ snapshots.Line) error {
		if c := r.(*snapshots.Character); id == 0 && strings.HasSuffix(c.Name, " Quorvex") {
			name, id = c.Name, c.ID
		}
		return nil
	})
	if err != nil || id == 0 {
		t.Fatalf("no renamed character in %s: %v", renamed, err)
	}
	return base, renamed, name, id
}

// holdBuildLock takes data's build lock, as a gds index building there
// would hold it.
func holdBuildLock(t *testing.T, data string) *disk.Lock {
	t.Helper()
	lock, ok, err := disk.TryLock(filepath.Join(data, "build.lock"), 0o600)
	if err != nil || !ok {
		t.Fatalf("build lock: %v %v", ok, err)
	}
	return lock
}

// childPID waits for /admin/status to show a build running in a child
// process and returns its pid.
func (s *faultServer) childPID(t *testing.T) int {
	t.Helper()
	var pid int
	waitFor(t, "a build in a child process", 30*time.Second, func() bool {
		failIfExited(t, s.exited, "gds serve exited:\n%s", s.out)
		var b struct {
			PID int `json:"pid"`
		}
		if st := s.status(t); st.Building != nil && json.Unmarshal(*st.Building, &b) == nil {
			pid = b.PID
		}
		return pid != 0
	})
	return pid
}

// procInfo is what a test reads of /proc/PID/stat.
type procInfo struct{ ppid, nice int }

// procStat reads /proc/PID/stat, or the stat of its thread task.
func procStat(t *testing.T, pid int, task string) procInfo {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/stat", pid)
	if task != "" {
		path = fmt.Sprintf("/proc/%d/task/%s/stat", pid, task)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 17 {
		t.Fatalf("%s: %q", path, raw)
	}
	// Fields from the state on: ppid is stat's 4th, nice its 19th.
	ppid, err1 := strconv.Atoi(f[1])
	nice, err2 := strconv.Atoi(f[16])
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: %q", path, raw)
	}
	return procInfo{ppid: ppid, nice: nice}
}

// progressSeen records what a child reported.
type progressSeen struct {
	pid      int
	progress []indexer.Progress
}

func (p *progressSeen) Started(pid int)              { p.pid = pid }
func (p *progressSeen) Progress(pr indexer.Progress) { p.progress = append(p.progress, pr) }

// TestBuildChildRelay: the child's JSON log lines reach the server's log
// tagged component=build-child at their level, its progress lines the
// status, and its last failure the build's error.
func TestBuildChildRelay(t *testing.T) {
	var logged apitest.Buffer
	c := childBuilds{log: zerolog.New(&logged).With().Str("component", "build-child").Logger()}
	var seen progressSeen
	child := strings.Join([]string{
		`{"level":"info","build_id":"b1","time":"2026-11-29T00:00:00Z","message":"opened the live generation"}`,
		`{"level":"info","phase":"tables","kind":"character","done":40,"total":100,"time":"2026-11-29T00:00:01Z","message":"` + progressMessage + `"}`,
		`{"level":"error","error":"disk full","time":"2026-11-29T00:00:02Z","message":"build failed; the live generation keeps serving"}`,
		`gds: index: build from s failed; the live generation is unchanged: disk full`,
	}, "\n")
	last := c.relay(strings.NewReader(child), &seen)
	if want := "index: build from s failed; the live generation is unchanged: disk full"; last != want {
		t.Errorf("last error %q, want %q", last, want)
	}
	if want := []indexer.Progress{{Phase: "tables", Kind: "character", Done: 40, Total: 100}}; !slices.Equal(seen.progress, want) {
		t.Errorf("progress %+v, want %+v", seen.progress, want)
	}
	var lines []map[string]any
	for line := range strings.Lines(logged.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("server log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	want := []struct{ level, message string }{
		{"info", "opened the live generation"},
		{"error", "build failed; the live generation keeps serving"},
		{"error", "gds: index: build from s failed; the live generation is unchanged: disk full"},
	}
	if len(lines) != len(want) {
		t.Fatalf("server log:\n%s", logged.String())
	}
	for i, w := range want {
		if lines[i]["level"] != w.level || lines[i]["message"] != w.message || lines[i]["component"] != "build-child" {
			t.Errorf("server log line %d: %v, want %s %q tagged build-child", i, lines[i], w.level, w.message)
		}
	}
	if lines[0]["build_id"] != "b1" || lines[1]["error"] != "disk full" {
		t.Errorf("the child's fields were not kept: %v", lines[:2])
	}
}

// TestBuildChildCommand: the child is gds index with the server's build
// settings, and none of the server's GDS_ variables.
func TestBuildChildCommand(t *testing.T) {
	c := childBuilds{data: "/var/lib/gds", batch: 5000, bleveChars: true, logLevel: "warn"}
	got := strings.Join(c.args(indexer.BuildRequest{Snapshot: "/snap", Full: true}), " ")
	for _, want := range []string{"index ", "--snapshot /snap", "--data /var/lib/gds", "--keep-retired", "--force", "--bleve-batch 5000",
		"--bleve-characters=true", "--json", "--log-format json", "--log-level warn", "--full"} {
		if !strings.Contains(got, want) {
			t.Errorf("gds %s: no %s", got, want)
		}
	}
	if slices.Contains(c.args(indexer.BuildRequest{Snapshot: "/snap"}), "--full") {
		t.Error("--full without a full build request")
	}
	env := withoutGDSVars([]string{"PATH=/bin", "GDS_PUBLISH=s3://b", "GOGC=200", "GDS_LOG_FORMAT=pretty"})
	if !slices.Equal(env, []string{"PATH=/bin", "GOGC=200"}) {
		t.Errorf("child environment %q", env)
	}
	for _, c := range []struct {
		env  []string
		args []string
		want bool
	}{{nil, nil, false}, {nil, []string{"--build-process"}, true}, {[]string{"GDS_BUILD_PROCESS", "true"}, nil, true}} {
		cfg, err := parseServe(t, envMap(c.env...), c.args...)
		if err != nil || cfg.BuildProcess != c.want {
			t.Errorf("env %q, flags %q: --build-process %v (%v), want %v", c.env, c.args, cfg.BuildProcess, err, c.want)
		}
	}
}
