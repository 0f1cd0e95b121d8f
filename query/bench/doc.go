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
//
// The snapshot is written as zstd (.jsonl.zst). gds over HTTP is measured
// with 1 and 2 sequential Go clients and with 16 concurrent keep-alive
// connections, with the response cache on and off, and with wrk against a
// ceiling: a minimal net/http server in a process of its own that answers
// each request (its path, and a POST's body) from memory with the answer
// gds gave for it (captured first: status, every header with a value of
// the same size, the body), driven by the same wrk scripts; gds's rows are
// reported as a fraction of it. Besides searches, wrk resolves the
// characters the contains texts found, 20 to a POST /universe/names/. The build child also reports when a search first answered (time to
// searchable), the search child times record-store lookups, and the last
// table lists every target with what the run measured and whether it was
// met. Flags (after -args):
//
//	-work DIR          keep and reuse generated data, the generation and queries.json
//	-rebuild=false     reuse a generation of the same snapshot in -work
//	-incremental=false skip the incremental reindex (1% of names renamed)
//	-gc-percent N      GOGC of the builds (default 400, gds index's default;
//	                   100 is Go's), unless GOGC is set in the environment
//	-gds-only          only the gds in-process search scenarios on the data in -work
//	                   (no build, PostgreSQL or HTTP); also reports each query's
//	                   fastest of 5 passes, which is steadier on a busy machine
//	-gds-results FILE  every query's result IDs: written when missing, otherwise
//	                   each run fails on any difference (a guard for search changes)
//	-gds-texts "a,b"   with -gds-only: time only these texts and print their work
//	-gds-cpuprofile F  CPU profile of the one-client contains scenario
//	-analysts on|only|off  the analysts' query set beside PostgreSQL (only: just that)
//	-snapshot DIR      use this snapshot (read only) instead of generating one
//	-wrk-duration D    each wrk round against gds and then the ceiling (default 5s)
//	-wrk-rounds N      rounds per wrk row, alternating; each side's best is shown (default 3)
//	-wrk-threads N     wrk -t (default 1: the client shares the cores with the server)
//	-http-only         only gds over HTTP and its ceiling, on the data and queries.json in -work
//	-go-clients=false  leave out the Go client's HTTP rows
package bench
