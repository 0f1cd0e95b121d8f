//go:build unix

package api

import "testing"

// BenchmarkStrictServed is a strict public search through the middleware
// gds serve installs (the request log, the metrics, the error limiter),
// with the response cache and the rate limits off as in the harness's
// strict row, written out as net/http would write it (wireWriter). Its
// allocations are exact; its time (and cpu-ns/op, the process's processor
// time) is the whole per-request cost of gds's own code on that path,
// without the connection's system calls:
// go test -run '^$' -bench StrictServed -count 10 ./api
func BenchmarkStrictServed(b *testing.B) {
	ts := newTestServer(b, searchRecords(), func(d *Deps) {
		d.Limits.CacheBytes, d.Limits.RateLimitsOff = -1, true
		servedMiddleware(d)
	})
	benchGets(b, ts, []string{"/latest/search/?categories=character&search=Jita+Trader&strict=true"}, false)
}
