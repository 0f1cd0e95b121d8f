package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"gds/api/admin"
	"gds/indexer"
)

// openServedData builds snapshot into a data directory and keeps its
// Manager open, as a running gds serve holds it.
func openServedData(t *testing.T, snapshot string) (string, *indexer.Manager) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	m, err := indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if _, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: snapshot, Trigger: "test"}); err != nil {
		t.Fatal(err)
	}
	return data, m
}

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, envMap(), &out, &errb)
	return out.String(), errb.String(), err
}

// TestQueryBesideServer runs gds query on a data directory a Manager holds
// open (a running server) and checks that the Manager is undisturbed: it
// still answers, and still builds and switches generations.
func TestQueryBesideServer(t *testing.T) {
	snap := opsSnapshot(t)
	data, m := openServedData(t, snap)

	out, _, err := runCmd(t, "query", "--data", data, "--json", "words:jita")
	if err != nil {
		t.Fatal(err)
	}
	var res admin.QueryResponse
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Generation != 1 || len(res.Hits) != 2 || res.Query != "words:jita" {
		t.Errorf("result = %+v", res)
	}

	out, stderr, err := runCmd(t, "query", "--data", data, "--category", "solar_system", "name:jita")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Fields(lines[0])[0] != "ID" ||
		!strings.HasPrefix(lines[1], "30000142") || !strings.Contains(lines[1], "solar_system") || !strings.Contains(lines[1], "Jita") {
		t.Errorf("table:\n%s", out)
	}
	if !strings.Contains(stderr, "1 hit (limit") {
		t.Errorf("stderr = %q", stderr)
	}

	// Unquoted clauses arrive as separate arguments.
	out, _, err = runCmd(t, "query", "--data", data, "--json", "+words:jita", "+id:90000001")
	res = admin.QueryResponse{}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || len(res.Hits) != 1 || res.Hits[0].ID != 90000001 {
		t.Errorf("two-argument query: %v %s", err, out)
	}

	g := m.Acquire()
	if g == nil {
		t.Fatal("the manager lost its generation")
	}
	hits, err := g.Query(context.Background(), "name:amarr", "", 5)
	g.Release()
	if err != nil || len(hits) != 1 {
		t.Errorf("manager query after gds query: %v %v", hits, err)
	}
	r, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: snap, Full: true, Trigger: "test"})
	if err != nil || r.Generation != 2 {
		t.Fatalf("manager rebuild after gds query: %+v %v", r, err)
	}
	res = admin.QueryResponse{}
	out, _, err = runCmd(t, "query", "--data", data, "--json", "name:jita")
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Generation != 2 {
		t.Errorf("gds query after the switch: %v %s", err, out)
	}
}

// TestQueryOtherProcess opens the generation from a second process (this
// test binary re-run as gds query) while this process's Manager holds it:
// bleve's read-only open must not conflict across processes.
func TestQueryOtherProcess(t *testing.T) {
	if os.Getenv("GDS_TEST_QUERY_CHILD") != "" {
		return // the child's copy of this test does nothing
	}
	data, m := openServedData(t, opsSnapshot(t))
	cmd := exec.Command(os.Args[0], "-test.run=^TestQueryChildProcess$")
	cmd.Env = append(os.Environ(), "GDS_TEST_QUERY_CHILD="+data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child gds query: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"name": "Jita"`) {
		t.Errorf("child output lacks the hit:\n%s", out)
	}
	g := m.Acquire()
	defer g.Release()
	if hits, err := g.Query(context.Background(), "name:jita", "", 5); err != nil || len(hits) != 1 {
		t.Errorf("manager after the child: %v %v", hits, err)
	}
}

// TestQueryChildProcess is the child of TestQueryOtherProcess.
func TestQueryChildProcess(t *testing.T) {
	data := os.Getenv("GDS_TEST_QUERY_CHILD")
	if data == "" {
		t.Skip("run by TestQueryOtherProcess")
	}
	err := run(context.Background(), []string{"query", "--data", data, "--json", "name:jita"}, envMap(), os.Stdout, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
}

func TestQueryRefuses(t *testing.T) {
	data, _ := openServedData(t, opsSnapshot(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "name:jita"}, "--data"},
		{[]string{"query", "--data", data}, "usage"},
		{[]string{"query", "--data", t.TempDir(), "name:jita"}, "no index generation"},
		{[]string{"query", "--data", data, "--limit", "0", "name:jita"}, "--limit"},
		{[]string{"query", "--data", data, "--category", "planet", "name:jita"}, "unknown category"},
		{[]string{"query", "--data", data, `name:"open`}, "bad query"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}
