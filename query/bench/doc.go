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
// a gds generation from it, extracts the character names to a ready CSV
// (timed apart) and loads it into a private PostgreSQL instance (initdb
// into a temporary directory, unix socket, the settings of a one-off bulk
// load: see pgSettings), checks that both return the same number of hits
// for every query, then times both in-process (gds through query.Searcher,
// PostgreSQL through pgx prepared statements) and, when `gds serve`
// exists, gds over HTTP. It prints tables; it never asserts timings.
//
// The snapshot is written as zstd (.jsonl.zst). gds over HTTP is measured
// with 1 and 2 sequential Go clients and with 16 concurrent keep-alive
// connections, with the response cache on and off, and with wrk against
// two ceilings that answer every request of a scenario with one prepared
// answer (the scenario's median-sized answer from gds), no lookup: a
// minimal net/http server in a process of its own, and Debian's nginx.
// gds's rows are reported as a fraction of both. Besides searches, wrk
// resolves the characters the contains texts found, 20 to a POST
// /universe/names/. The route rows put affiliation, local and suggest
// (each skipped when the binary answers it 404) beside PostgreSQL at 16
// connections. The build child also reports when a search first answered
// (time to searchable), both builds report wall and CPU seconds, the
// search child times record-store lookups, and the last table lists every
// target with what the run measured and whether it was met; summary.json
// in the work directory holds the figures of the cost curve (-sizes).
// Flags (after -args):
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
//	-routes off        leave out the route rows (affiliation, local, suggest)
//	-rows "a,b"        only these rows, of build, contains, strict, cached, lookups,
//	                   analysts, affiliation, local, suggest, incremental (default all):
//	                   a large size measured in parts; the table says which ran
//	-progress D        repeat the phase still running every D (default 1m; 0: never)
//	-suggest-sample N  PostgreSQL's suggest recall on the first N typos (default 100)
//	-suggest-pg-time D PostgreSQL's suggest run at 16 connections asks typos until the
//	                   sample is asked and D has passed (default 30s): its q/s and latencies
//	-gist-siglen N     siglen of PostgreSQL's GiST trigram index for suggest (default
//	                   256; 0: PostgreSQL's own default, 12 bytes)
//	-sizes "a,b,c"     run the whole bench at each size (each in -work/n<size>) and print
//	                   the cost curve with the exponents k of cost ∝ N^k (make bench-curve)
package bench
