package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
	"gds/snapshots/disk"
)

func TestIndex(t *testing.T) {
	snap := opsSnapshot(t)
	data := filepath.Join(t.TempDir(), "data")

	out, stderr, err := runCmd(t, "index", "--snapshot", snap, "--data", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "generation 1 live") || !strings.Contains(out, "solar_system") {
		t.Errorf("output:\n%s", out)
	}
	// Not a terminal: JSON log lines, no progress bar escapes.
	if strings.Contains(stderr, "\033[") {
		t.Errorf("terminal escapes on a non-terminal stderr: %q", stderr)
	}

	out, _, err = runCmd(t, "index", "--snapshot", snap, "--data", data)
	if err != nil || !strings.Contains(out, "already live as generation 1") {
		t.Errorf("second run: %v\n%s", err, out)
	}

	out, _, err = runCmd(t, "index", "--snapshot", snap, "--data", data, "--full", "--json")
	var res struct {
		Build indexer.BuildResult
		Live  *indexer.Meta
	}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("--full --json: %v\n%s", err, out)
	}
	if res.Build.Generation != 2 || res.Build.Trigger != "cli" || res.Live == nil || res.Live.ID != 2 || res.Live.Counts["solar_system"] != 2 {
		t.Errorf("--full --json = %s", out)
	}

	out, _, err = runCmd(t, "query", "--data", data, "--json", "name:amarr")
	if err != nil || !strings.Contains(out, `"generation": 2`) {
		t.Errorf("query after index: %v\n%s", err, out)
	}
}

func TestIndexRefuses(t *testing.T) {
	snap := opsSnapshot(t)
	data := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "--data", data}, "--snapshot"},
		{[]string{"index", "--snapshot", snap}, "--data"},
		{[]string{"index", "--snapshot", filepath.Join(t.TempDir(), "none"), "--data", data}, "failed"},
		{[]string{"index", "--snapshot", snap, "--data", data, "extra"}, "unexpected"},
		{[]string{"index", "--snapshot", snap, "--data", data, "--bleve-batch", "0"}, "--bleve-batch"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}

	// A build directory whose builder holds the data directory's build
	// lock (a server building) is not swept away, however fresh or old.
	busy := filepath.Join(data, "generations", "000007.building")
	if err := os.MkdirAll(filepath.Join(busy, "character"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, ok, err := disk.TryLock(filepath.Join(data, "build.lock"), 0o600)
	if err != nil || !ok {
		t.Fatalf("build lock: %v %v", ok, err)
	}
	_, _, err = runCmd(t, "index", "--snapshot", snap, "--data", data)
	if err == nil || !strings.Contains(err.Error(), "another process is building") {
		t.Errorf("with a build in progress: err = %v", err)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("the running build's directory was removed: %v", err)
	}
	lock.Unlock()
}

// A build directory left by a gds index killed mid-build (its lock is free
// again) is removed by the next gds index, which then builds, even when
// the leftover was written a moment ago.
func TestIndexCleansLeftover(t *testing.T) {
	snap := opsSnapshot(t)
	data := filepath.Join(t.TempDir(), "data")
	left := filepath.Join(data, "generations", "000007.building")
	if err := os.MkdirAll(filepath.Join(left, "character"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "character", "base.tbl"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, "index", "--snapshot", snap, "--data", data)
	if err != nil || !strings.Contains(out, "live") {
		t.Fatalf("gds index beside a leftover: %v\n%s", err, out)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the leftover %s is still there: %v", left, err)
	}
}

// --bleve-batch sets how many documents go in each bleve batch (and
// segment) of a full build; the generation records it.
func TestIndexBleveBatch(t *testing.T) {
	var chars []snapshots.Record
	for i := range 5 {
		chars = append(chars, &snapshots.Character{Entity: indexertest.Named(int64(90000001+i), fmt.Sprintf("Pilot %d", i)), CorporationID: 98000001})
	}
	snap := indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: chars})
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, indexer.DefaultBatchSize}, {[]string{"--bleve-batch", "2"}, 2}} {
		data := filepath.Join(t.TempDir(), "data")
		out, stderr, err := runCmd(t, append([]string{"index", "--snapshot", snap, "--data", data, "--json"}, tc.args...)...)
		var res struct{ Live *indexer.Meta }
		if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Live == nil {
			t.Fatalf("%v: %v\n%s%s", tc.args, err, out, stderr)
		}
		if res.Live.BleveBatch != tc.want {
			t.Errorf("%v: generation built with bleve batches of %d, want %d", tc.args, res.Live.BleveBatch, tc.want)
		}
		if out, _, err := runCmd(t, "query", "--data", data, "--json", "name:pilot*"); err != nil || strings.Count(out, `"id"`) != 5 {
			t.Errorf("%v: query: %v\n%s", tc.args, err, out)
		}
	}
}

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		p    indexer.Progress
		want string
	}{
		{indexer.Progress{Phase: "verify"}, "[1/5] verify                   [          ]        1.5s"},
		{indexer.Progress{Phase: "tables", Kind: "characters", Done: 5, Total: 10}, "[3/5] tables characters        [====>     ]  50%   1.5s"},
		{indexer.Progress{Phase: "bleve", Done: 12, Total: 10}, "[5/5] bleve                    [==========] 100%   1.5s"},
	} {
		if got := progressLine(tc.p, 1500*time.Millisecond, 10); got != tc.want {
			t.Errorf("progressLine(%+v)\n got %q\nwant %q", tc.p, got, tc.want)
		}
	}
}

func TestNewLogger(t *testing.T) {
	for _, tc := range []struct {
		c      logConfig
		json   bool
		hasErr bool
	}{
		{logConfig{"json", "info"}, true, false},
		{logConfig{"auto", "info"}, true, false}, // a buffer is not a terminal
		{logConfig{"pretty", "debug"}, false, false},
		{logConfig{"xml", "info"}, false, true},
		{logConfig{"json", "loud"}, false, true},
	} {
		var buf lockedBuffer
		log, err := newLogger(tc.c, &buf)
		if (err != nil) != tc.hasErr {
			t.Errorf("%+v: err = %v", tc.c, err)
			continue
		}
		if err != nil {
			continue
		}
		log.Info().Str("k", "v").Msg("hello")
		var m map[string]any
		isJSON := json.Unmarshal([]byte(buf.String()), &m) == nil
		if isJSON != tc.json || !strings.Contains(buf.String(), "hello") {
			t.Errorf("%+v: wrote %q", tc.c, buf.String())
		}
	}
}
