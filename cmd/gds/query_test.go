package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query/analyst"
)

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
	data, m := indexertest.ServedData(t, snap)

	out, _, err := runCmd(t, "query", "--data", data, "--json", "words:jita")
	if err != nil {
		t.Fatal(err)
	}
	var res analyst.Result
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
	if !strings.Contains(stderr, "1 of 1 hit in") {
		t.Errorf("stderr = %q", stderr)
	}

	// Unquoted clauses arrive as separate arguments.
	out, _, err = runCmd(t, "query", "--data", data, "--json", "+words:jita", "+id:90000001")
	res = analyst.Result{}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || len(res.Hits) != 1 || res.Hits[0].ID != 90000001 {
		t.Errorf("two-argument query: %v %s", err, out)
	}

	g := m.Acquire()
	if g == nil {
		t.Fatal("the manager lost its generation")
	}
	mres, err := analyst.On(g).Query(context.Background(), analyst.Request{Query: "name:amarr", Limit: 5})
	g.Release()
	if err != nil || len(mres.Hits) != 1 {
		t.Errorf("manager query after gds query: %+v %v", mres, err)
	}
	r, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: snap, Full: true, Trigger: "test"})
	if err != nil || r.Generation != 2 {
		t.Fatalf("manager rebuild after gds query: %+v %v", r, err)
	}
	res = analyst.Result{}
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
	data, m := indexertest.ServedData(t, opsSnapshot(t))
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
	if res, err := analyst.On(g).Query(context.Background(), analyst.Request{Query: "name:jita"}); err != nil || len(res.Hits) != 1 {
		t.Errorf("manager after the child: %+v %v", res, err)
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
	data, _ := indexertest.ServedData(t, opsSnapshot(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"query", "name:jita"}, "--data"},
		{[]string{"query", "--data", data}, "usage"},
		{[]string{"query", "--data", t.TempDir(), "name:jita"}, "no index generation"},
		{[]string{"query", "--data", data, "--limit", "-1", "name:jita"}, "--limit"},
		{[]string{"query", "--data", data, "--limit", "5000", "name:jita"}, "limit must be from 1 to 1000"},
		{[]string{"query", "--data", data, "--format", "xml", "name:jita"}, "--format must be table, json, csv, jsonl"},
		{[]string{"query", "--data", data, "--facets", "colour", "*"}, `cannot facet on "colour"; valid: corporation_id`},
		{[]string{"query", "--data", data, "colour:red"}, `no field "colour"; valid: name, words, id`},
		{[]string{"query", "--data", data, "--category", "planet", "name:jita"}, "unknown category"},
		{[]string{"query", "--data", data, `name:"open`}, "bad query"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

// gds query's analysts' flags: --fields alone documents every field;
// --fields, --facets and --sort print stored values, counts and order;
// --format csv and jsonl stream every hit in a form that parses back.
func TestQueryAnalystFlags(t *testing.T) {
	data, _ := indexertest.ServedData(t, opsSnapshot(t))
	out, _, err := runCmd(t, "query", "--fields")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range analyst.Fields() {
		if !strings.Contains(out, "\n"+f.Name+" ") || !strings.Contains(out, f.Example) {
			t.Errorf("--fields lacks %s or its example %q", f.Name, f.Example)
		}
	}
	out, stderr, err := runCmd(t, "query", "--data", data, "--category", "character", "--fields", "corporation_id",
		"--facets", "corporation_id", "--sort", "-id", "*")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "corporation_id") ||
		!strings.Contains(out, "corporation_id (keyword)") || !strings.Contains(out, "█") || !strings.Contains(stderr, "hit in ") {
		t.Errorf("table output:\n%s\n%s", out, stderr)
	}
	out, _, err = runCmd(t, "query", "--data", data, "--format", "csv", "--fields", "corporation_id", "--sort", "id", "*")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 3 || strings.Join(rows[0], ",") != "id,category,name,score,corporation_id" {
		t.Fatalf("csv: %v\n%s", err, out)
	}
	for i := 2; i < len(rows); i++ {
		if rows[i-1][0] > rows[i][0] {
			t.Errorf("csv rows out of id order: %v then %v", rows[i-1], rows[i])
		}
	}
	out, _, err = runCmd(t, "query", "--data", data, "--format", "jsonl", "words:jita")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(out) {
		var h analyst.Hit
		if err := json.Unmarshal([]byte(line), &h); err != nil || h.ID == 0 {
			t.Fatalf("jsonl line %q: %v", line, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("jsonl: %d lines, want 2:\n%s", n, out)
	}
}

// --analyst-timeout stops a query past it: gds query fails saying so, and
// gds serve's operator port answers a JSON 504.
func TestAnalystTimeoutFlag(t *testing.T) {
	snap := opsSnapshot(t)
	data, _ := indexertest.ServedData(t, snap)
	_, _, err := runCmd(t, "query", "--data", data, "--analyst-timeout", "1ns", "--facets", "corporation_id", "*")
	if err == nil || !strings.Contains(err.Error(), "ran longer than --analyst-timeout 1ns") {
		t.Errorf("gds query past its time: %v", err)
	}
	if _, _, err := runCmd(t, "query", "--data", data, "--analyst-timeout", "1m", "words:jita"); err != nil {
		t.Errorf("gds query within its time: %v", err)
	}
	s := startServe(t, envMap("GDS_SNAPSHOT", snap, "GDS_DATA", filepath.Join(t.TempDir(), "data"), "GDS_ADMIN_ADDR", "127.0.0.1:0"),
		"--analyst-timeout", "1ns", "--analyst-concurrency", "2")
	code, body := httpGet(t, "http://"+s.admin+"/admin/query?q=name:*ita*")
	if code != 504 || !strings.Contains(string(body), `{"error":"The query ran longer than 1ns (--analyst-timeout)`) {
		t.Errorf("/admin/query past its time = %d %s", code, body)
	}
}
