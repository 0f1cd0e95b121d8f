//go:build unix

package api

import (
	"os"
	"testing"

	"gds/indexer"
	"gds/snapshots/envtest"
)

// BenchmarkSuggestServed is the harness's suggest row in process: each
// path of its request list (a Lua file of quoted paths, one-edit typos of
// real names) in turn, through the router, cache and rate limits off,
// over an existing data directory opened as gds serve opens it by default
// (tables, stores and typo indexes in memory while they fit a seventh of
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
	env := envtest.Getenv(b, "a data directory and a suggest request list", "GDS_BENCH_DATA", "GDS_BENCH_SUGGEST")
	paths := envtest.RequestPaths(b, env[1])
	o := indexer.Options{DataDir: env[0], TablesInMemoryAuto: true, StoresInMemoryAuto: true}
	if os.Getenv("GDS_BENCH_HOLD") == "tables" {
		o.TablesInMemory = true
	}
	_, ts := serveDataWith(b, o, func(*Deps) {})
	benchGets(b, ts, paths, true)
}
