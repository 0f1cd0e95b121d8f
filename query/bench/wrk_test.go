//go:build bench

package bench

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkConns is the number of connections of the wrk rows: wrk (Debian
// package) is a load generator light enough to leave the server most of
// the 2 cores, unlike a Go client in the harness's process.
const wrkConns = 32

// wrkZipf runs wrk against addr for d with a Zipf-like mix of the contains
// texts (rank r drawn with probability falling as r^-1, by cubing a uniform
// draw over 200 texts), the shape of real search traffic: a few texts very
// often, most rarely. It returns the timing, or one with a Note when wrk is
// missing or fails.
func wrkZipf(addr, work string, texts []string, d time.Duration) Timing {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return Timing{Note: "wrk not installed (apt-get install wrk)"}
	}
	texts = texts[:min(len(texts), 200)]
	var b strings.Builder
	b.WriteString("paths = {")
	for i, t := range texts {
		if i > 0 {
			b.WriteByte(',')
		}
		v := url.Values{"search": {t}, "categories": {"character"}}
		fmt.Fprintf(&b, "%q", "/latest/search/?"+v.Encode())
	}
	b.WriteString("}\nrequest = function()\n  local r = math.random()\n  local i = math.floor(#paths * r * r * r) + 1\n  return wrk.format(\"GET\", paths[i])\nend\n")
	script := filepath.Join(work, "zipf.lua")
	if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
		return Timing{Note: err.Error()}
	}
	out, err := exec.Command(bin, "-t1", fmt.Sprintf("-c%d", wrkConns), fmt.Sprintf("-d%ds", int(d.Seconds())),
		"--latency", "-s", script, "http://"+addr).CombinedOutput()
	if err != nil {
		return Timing{Note: fmt.Sprintf("wrk: %v: %s", err, tail(string(out), 300))}
	}
	return parseWrk(string(out), d)
}

var (
	wrkRate    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkPct     = regexp.MustCompile(`(?m)^\s+(50|90|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkMax     = regexp.MustCompile(`Latency\s+\S+\s+\S+\s+([0-9.]+)(us|ms|s)`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkSockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func wrkDur(v, unit string) time.Duration {
	f, _ := strconv.ParseFloat(v, 64)
	switch unit {
	case "us":
		return time.Duration(f * float64(time.Microsecond))
	case "ms":
		return time.Duration(f * float64(time.Millisecond))
	}
	return time.Duration(f * float64(time.Second))
}

// parseWrk reads wrk's --latency report: requests/s, the 50/90/99th
// percentiles (reported here as p50/p95/p99 with p95 taken from wrk's 90th)
// and the maximum; non-2xx answers and socket errors count as errors.
func parseWrk(out string, d time.Duration) Timing {
	m := wrkRate.FindStringSubmatch(out)
	if m == nil {
		return Timing{Note: "wrk printed no rate: " + tail(out, 300)}
	}
	rate, _ := strconv.ParseFloat(m[1], 64)
	t := Timing{Measured: true, Wall: d, Queries: int(math.Round(rate * d.Seconds())), Note: "p95 column: wrk's 90th percentile"}
	for _, p := range wrkPct.FindAllStringSubmatch(out, -1) {
		switch p[1] {
		case "50":
			t.P50 = wrkDur(p[2], p[3])
		case "90":
			t.P95 = wrkDur(p[2], p[3])
		case "99":
			t.P99 = wrkDur(p[2], p[3])
		}
	}
	if mx := wrkMax.FindStringSubmatch(out); mx != nil {
		t.Max = wrkDur(mx[1], mx[2])
	}
	if e := wrkNon2xx.FindStringSubmatch(out); e != nil {
		t.Errors, _ = strconv.Atoi(e[1])
	}
	if e := wrkSockErr.FindStringSubmatch(out); e != nil {
		for _, v := range e[1:] {
			n, _ := strconv.Atoi(v)
			t.Errors += n
		}
	}
	return t
}
