//go:build unix

package api

import (
	"os"
	"regexp"
	"testing"

	"gds/indexer"
)

// BenchmarkSuggestServed is the harness's suggest row in process: each
// path of its request list (a Lua file of quoted paths, one-edit typos of
// real names) in turn, through the router, cache and rate limits off,
// over an existing data directory opened as gds serve opens it by default
// (tables, stores and typo indexes in memory while they fit an eighth of
// the machine's memory; GDS_BENCH_HOLD=tables holds the tables and their
// typo indexes whatever their size), written out as net/http would write
// it (wireWriter), after a first pass over the list (the pages of the
// mapped files it reads faulted in, as in a server that has answered a
// while). cpu-ns/op is the process's processor time per answer.
// It only runs when both are named:
//
//	GDS_BENCH_DATA=/path/data GDS_BENCH_SUGGEST='/path/route-suggest,.lua' \
//	  go test -run '^$' -bench SuggestServed -benchtime 3000x -benchmem ./api
func BenchmarkSuggestServed(b *testing.B) {
	data, rpath := os.Getenv("GDS_BENCH_DATA"), os.Getenv("GDS_BENCH_SUGGEST")
	if data == "" || rpath == "" {
		b.Skip("GDS_BENCH_DATA and GDS_BENCH_SUGGEST name a data directory and a suggest request list")
	}
	paths := luaPaths(b, rpath)
	o := indexer.Options{DataDir: data, TablesInMemoryAuto: true, StoresInMemoryAuto: true}
	if os.Getenv("GDS_BENCH_HOLD") == "tables" {
		o.TablesInMemory = true
	}
	_, ts := serveDataWith(b, o, func(*Deps) {})
	benchGets(b, ts, paths, true)
}

// luaPaths reads the quoted paths of a harness request list.
func luaPaths(tb testing.TB, path string) []string {
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var paths []string
	for _, m := range regexp.MustCompile(`"(/[^"]*)"`).FindAllSubmatch(raw, -1) {
		paths = append(paths, string(m[1]))
	}
	if len(paths) == 0 {
		tb.Fatalf("%s lists no paths", path)
	}
	return paths
}
