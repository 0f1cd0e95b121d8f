// Package bench is the side-by-side benchmark of gds search against
// PostgreSQL pg_trgm. Its only test lives behind the "bench" build tag so
// that `make test` never runs it:
//
//	make bench-quick   # 1,000,000 generated names
//	make bench         # 10,000,000 generated names
//
// or directly:
//
//	go test -tags bench -run TestBench -timeout 60m -v ./query/bench -args -names 1000000
//
// The harness generates a snapshot with `gds generate` (fixed seed), builds
// a gds generation from it, loads the same character names into a private
// PostgreSQL instance (initdb into a temporary directory, unix socket),
// checks that both return the same number of hits for every query, then
// times both in-process (gds through query.Searcher, PostgreSQL through pgx
// prepared statements) and, when `gds serve` exists, gds over HTTP. It
// prints one table; it never asserts timings.
package bench
