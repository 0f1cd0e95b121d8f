//go:build unix

package api

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/gin-gonic/gin"

	"gds/api/clientip"
	"gds/api/ratelimit"
)

// cpuTime is the CPU time (user and system) the process has used: a
// busy machine stretches it less than the wall-clock time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wireWriter does what net/http's server does with an answer, without a
// connection: the header block is written out sorted (as net/http writes
// it) and the body is counted. httptest.ResponseRecorder would instead
// clone the header map, a cost no real server pays.
type wireWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *wireWriter) Header() http.Header { return w.h }

func (w *wireWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.h.Write(io.Discard)
	}
}

func (w *wireWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(b)
	return len(b), nil
}

// BenchmarkSearchCachedLimiterCPU compares the server's work for a cached
// search with the rate limiter off and on, in alternating blocks of
// requests, by the CPU time the process spends, so other load on a shared
// machine (which stretches wall-clock timings by tens of percent) cancels
// out. Requests come from 4,096 client addresses in turn:
// go test -run '^$' -bench SearchCachedLimiterCPU -benchtime 400000x ./api
func BenchmarkSearchCachedLimiterCPU(b *testing.B) {
	reqs := make([]*http.Request, 4096)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/v2/search/?search=jita&categories=character,solar_system", nil)
		reqs[i].RemoteAddr = fmt.Sprintf("10.0.%d.%d:1234", i>>8, i&0xff)
	}
	servers := [2]*testServer{}
	for i, m := range benchModes() {
		servers[i] = newTestServer(b, searchRecords(), m.deps(clientip.Resolver{}))
	}
	b.ReportAllocs()
	compareCPU(b, 1000, func(s, i int) {
		w := &wireWriter{h: http.Header{}}
		servers[s].h.ServeHTTP(w, reqs[i%len(reqs)])
		if w.status != http.StatusOK {
			b.Fatal(w.status)
		}
	})
}

// compareCPU sends b.N requests to the two servers of a comparison in
// alternating blocks (do sends request i to server s) and reports the CPU
// time per request.
func compareCPU(b *testing.B, block int, do func(s, i int)) {
	var cmp comparison
	b.ResetTimer()
	for i := 0; i < b.N; i += block {
		var cpu [2]time.Duration
		for _, s := range cmp.order() {
			start := cpuTime(b)
			for j := range block {
				do(s, i+j)
			}
			cpu[s] = cpuTime(b) - start
		}
		cmp.add(float64(cpu[0])/float64(block), float64(cpu[1])/float64(block))
	}
	cmp.report(b, "cpu-ns/op", "%more-cpu")
}

// comparison collects a measurement of the two servers of a comparison
// per round (a block of requests, a wrk run): other load on a shared
// machine comes in bursts that stretch one round by tens of percent, so
// the difference reported is the median of the rounds' ratios, and the
// servers take turns going first so a trend hits both alike.
type comparison struct{ off, on, ratio []float64 }

// order is the order the servers run in this round.
func (c *comparison) order() [2]int {
	if len(c.off)%2 == 1 {
		return [2]int{1, 0}
	}
	return [2]int{0, 1}
}

func (c *comparison) add(off, on float64) {
	c.off, c.on = append(c.off, off), append(c.on, on)
	c.ratio = append(c.ratio, on/off)
}

// report reports the medians of both servers' rounds as off-unit and
// on-unit, and the median of the rounds' on/off ratios as a percentage
// named diff (the on server's extra cost; negated for a rate, where the
// extra cost is what the on server lacks).
func (c *comparison) report(b *testing.B, unit, diff string) {
	r := median(c.ratio)
	b.ReportMetric(median(c.off), "off-"+unit)
	b.ReportMetric(median(c.on), "on-"+unit)
	if strings.HasSuffix(unit, "/s") {
		b.ReportMetric(100*(1-r), diff)
	} else {
		b.ReportMetric(100*(r-1), diff)
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	x = slices.Clone(x)
	slices.Sort(x)
	if len(x)%2 == 1 {
		return x[len(x)/2]
	}
	return (x[len(x)/2-1] + x[len(x)/2]) / 2
}

// BenchmarkSearchCachedHTTPLimiterCPU is the same comparison over real
// HTTP on loopback, as a deployment behind a load balancer sees it: 4,096
// clients named by X-Forwarded-For from a trusted proxy (the loopback
// client). The client runs in the same process, so its CPU (reading four
// more headers per answer) counts too:
// go test -run '^$' -bench SearchCachedHTTPLimiterCPU -benchtime 40000x ./api
func BenchmarkSearchCachedHTTPLimiterCPU(b *testing.B) {
	urls := httpBenchServers(b)
	for i := range urls {
		urls[i] += "/v2/search/?search=jita&categories=character,solar_system"
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func(url string, i int) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.0.%d.%d", (i>>8)&0xf, i&0xff))
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatal(resp.StatusCode)
		}
	}
	compareCPU(b, 500, func(s, i int) { get(urls[s], i) })
}

// benchMode is how one server of a comparison runs: with the limiter on,
// or off and (headers) setting the four X-Ratelimit-* headers to fixed
// values, which is what ESI's headers alone cost in net/http's header
// writer, whatever the limiter behind them does. burn is a known extra
// cost (CPU spent per request, limiter off): the positive control that
// shows a comparison can see a cost of that size.
type benchMode struct {
	limiter, headers bool
	burn             time.Duration
}

// benchModes are the two servers of a comparison: off and on; off twice
// with BENCH_AA=1 to see how much of a difference the method itself
// shows; on twice with BENCH_ON=1 (to profile against a BENCH_AA=1
// profile); off and off with the headers with BENCH_HEADERS=1.
func benchModes() []benchMode {
	switch {
	case os.Getenv("BENCH_ON") != "":
		return []benchMode{{limiter: true}, {limiter: true}}
	case os.Getenv("BENCH_AA") != "":
		return []benchMode{{}, {}}
	case os.Getenv("BENCH_HEADERS") != "":
		return []benchMode{{}, {headers: true}}
	case os.Getenv("BENCH_BURN") != "":
		d, err := time.ParseDuration(os.Getenv("BENCH_BURN"))
		if err != nil {
			panic("BENCH_BURN: " + err.Error())
		}
		return []benchMode{{}, {burn: d}}
	}
	return []benchMode{{}, {limiter: true}}
}

// wrkBench is what a wrk benchmark drives: wrk's path (the benchmark is
// skipped without it), the two servers' URLs and the clients' script.
func wrkBench(b *testing.B) (bin string, urls [2]string, script string) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk not installed (make bench-deps)")
	}
	return bin, httpBenchServers(b), wrkClientsScript(b)
}

// httpBenchServers starts the comparison's two servers on loopback,
// trusting the loopback client as a proxy (so X-Forwarded-For names the
// benchmark's clients), and returns their base URLs.
func httpBenchServers(b *testing.B) [2]string {
	proxies, err := clientip.Parse("127.0.0.1,::1")
	if err != nil {
		b.Fatal(err)
	}
	var urls [2]string
	for i, m := range benchModes() {
		ts := newTestServer(b, searchRecords(), m.deps(proxies))
		srv := httptest.NewServer(ts.h)
		b.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	return urls
}

// deps configures a server of mode m: a budget no benchmark client
// spends (4,096 tokens an hour each) and proxies trusted.
func (m benchMode) deps(proxies clientip.Resolver) func(*Deps) {
	return func(d *Deps) {
		d.ClientIP = proxies
		d.Limits.RateLimitsOff = !m.limiter
		d.Limits.RateLimits = map[string]ratelimit.Limit{RateGroupSearch: {MaxTokens: 4096, Window: time.Hour}}
		if m.burn > 0 {
			d.Middleware = append(d.Middleware, func(*gin.Context) { burnCPU(m.burn) })
		}
		if m.headers {
			group, limit := []string{RateGroupSearch}, []string{"4096/1h"}
			remaining, used := []string{"4094"}, []string{"2"}
			d.Middleware = append(d.Middleware, func(c *gin.Context) {
				h := c.Writer.Header()
				h[HeaderRateLimitGroup], h[HeaderRateLimitLimit] = group, limit
				h[HeaderRateLimitRemaining], h[HeaderRateLimitUsed] = remaining, used
			})
		}
	}
}

// burnCPU spins for d of this thread's CPU time (wall time on a busy
// machine would charge other processes' slices to the request).
func burnCPU(d time.Duration) {
	var ts syscall.Timespec
	now := func() time.Duration {
		syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
		return time.Duration(ts.Nano())
	}
	for end := now() + d; now() < end; {
	}
}

// BenchmarkSearchCachedWrkLimiter compares the cached search's throughput
// over HTTP with the limiter off and on, driven by wrk (a separate process,
// light enough to leave the server most of the machine) from 4,096
// clients named by X-Forwarded-For from a trusted proxy (the loopback
// client). Each iteration is one round: wrk runs for 2 seconds against
// each server in turn, so load from other processes hits both alike. It
// reports both servers' requests/s and this process's CPU per request
// (the server's work; wrk's is not counted). Skipped without wrk
// (make bench-deps installs it):
// go test -run '^$' -bench SearchCachedWrkLimiter -benchtime 10x ./api
func BenchmarkSearchCachedWrkLimiter(b *testing.B) {
	bin, urls, script := wrkBench(b)
	var rate, cpu comparison
	b.ResetTimer()
	for range b.N {
		var reqs [2]float64
		var wall, used [2]time.Duration
		for _, s := range rate.order() {
			start, startCPU := time.Now(), cpuTime(b)
			out, err := exec.Command(bin, "-t1", "-c16", "-d2s", "--timeout", "10s", "-s", script, urls[s]).CombinedOutput()
			used[s] = cpuTime(b) - startCPU
			wall[s] = time.Since(start)
			if err != nil {
				b.Fatalf("wrk: %v: %s", err, out)
			}
			reqs[s] = wrkCount(b, out)
		}
		rate.add(reqs[0]/wall[0].Seconds(), reqs[1]/wall[1].Seconds())
		cpu.add(float64(used[0])/reqs[0], float64(used[1])/reqs[1])
	}
	rate.report(b, "req/s", "%less-req/s")
	cpu.report(b, "cpu-ns/req", "%more-cpu")
}

var wrkRequests = regexp.MustCompile(`(\d+) requests in`)

// BenchmarkSearchCachedWrkLimiterPaired is the throughput comparison with
// both servers driven at the same time, each by a wrk of its own (8
// connections, 4,096 clients as above), so a burst of other load on the
// machine hits both alike instead of whichever ran in that second. The
// two servers share this process's cores, so the one that spends more CPU
// per answer answers fewer: the rounds' ratio of requests is the
// limiter's cost in throughput. Each iteration is one round of 3 seconds;
// the wrk started first alternates:
// go test -run '^$' -bench SearchCachedWrkLimiterPaired -benchtime 10x ./api
func BenchmarkSearchCachedWrkLimiterPaired(b *testing.B) {
	bin, urls, script := wrkBench(b)
	var rate comparison
	b.ResetTimer()
	for range b.N {
		var reqs [2]float64
		var cmds [2]*exec.Cmd
		var outs [2]bytes.Buffer
		for _, s := range rate.order() {
			cmds[s] = exec.Command(bin, "-t1", "-c8", "-d3s", "--timeout", "10s", "-s", script, urls[s])
			cmds[s].Stdout, cmds[s].Stderr = &outs[s], &outs[s]
			if err := cmds[s].Start(); err != nil {
				b.Fatal(err)
			}
		}
		for s := range cmds {
			if err := cmds[s].Wait(); err != nil {
				b.Fatalf("wrk: %v: %s", err, outs[s].Bytes())
			}
			reqs[s] = wrkCount(b, outs[s].Bytes()) / 3
		}
		rate.add(reqs[0], reqs[1])
	}
	rate.report(b, "req/s", "%less-req/s")
}

// wrkClientsScript writes the wrk script that sends the cached search
// from 4,096 clients named by X-Forwarded-For.
func wrkClientsScript(b *testing.B) string {
	script := filepath.Join(b.TempDir(), "clients.lua")
	if err := os.WriteFile(script, []byte(`
local path = "/v2/search/?search=jita&categories=character,solar_system"
request = function()
  local i = math.random(0, 4095)
  return wrk.format("GET", path, {["X-Forwarded-For"] = "10.0." .. math.floor(i / 256) .. "." .. (i % 256)})
end
`), 0o644); err != nil {
		b.Fatal(err)
	}
	return script
}

// wrkCount is the number of answers wrk reports, failing the benchmark on
// any error or non-2xx answer.
func wrkCount(b *testing.B, out []byte) float64 {
	if bytes.Contains(out, []byte("Non-2xx")) || bytes.Contains(out, []byte("rror")) {
		b.Fatalf("wrk saw errors: %s", out)
	}
	m := wrkRequests.FindSubmatch(out)
	if m == nil {
		b.Fatalf("wrk printed no count: %s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return float64(n)
}
