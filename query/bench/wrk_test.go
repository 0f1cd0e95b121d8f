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

// wrkThreads is wrk's -t: one thread leaves the server most of the 2
// cores it shares with the client (wrk is light, unlike a Go client in the
// harness's process); -wrk-threads changes it.
var wrkThreads = 1

// wrkRounds is how many times each wrk row runs against gds and then the
// ceiling, alternately; each side's best round is reported.
var wrkRounds = 2

// wrkScript is a wrk Lua script that makes requests (see splitRequest):
// round robin from a different start in each thread, or a Zipf-like mix
// (rank r drawn with probability falling as r^-1, by cubing a uniform
// draw), the shape of real search traffic: a few texts very often, most
// rarely. Scripts with POSTs go round robin.
func wrkScript(paths []string, zipf bool) string {
	var b strings.Builder
	post := false
	for _, p := range paths {
		post = post || strings.HasPrefix(p, "POST ")
	}
	list := func(name string, each func(string) string) {
		b.WriteString(name + " = {")
		for i, p := range paths {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q", each(p))
		}
		b.WriteString("}\n")
	}
	list("paths", func(p string) string { _, path, _ := splitRequest(p); return path })
	if post {
		// Requests with a body are POSTs (the body is "" for a GET).
		list("bodies", func(p string) string { _, _, body := splitRequest(p); return body })
		list("types", requestType)
		b.WriteString("request = function()\n  i = i % #paths + 1\n  if bodies[i] == \"\" then return wrk.format(\"GET\", paths[i]) end\n" +
			"  return wrk.format(\"POST\", paths[i], {[\"Content-Type\"] = types[i]}, bodies[i])\nend\n")
	}
	b.WriteString("local threads = 0\nfunction setup(thread)\n  thread:set(\"id\", threads)\n  threads = threads + 1\nend\n")
	b.WriteString("function init(args)\n  local me = id or 0\n  math.randomseed(7 + me)\n  i = (me * 7919) % #paths\nend\n")
	switch {
	case post:
	case zipf:
		b.WriteString("request = function()\n  local r = math.random()\n  return wrk.format(\"GET\", paths[math.floor(#paths * r * r * r) + 1])\nend\n")
	default:
		b.WriteString("request = function()\n  i = i % #paths + 1\n  return wrk.format(\"GET\", paths[i])\nend\n")
	}
	return b.String()
}

// runWrk runs wrk with script against addr for d with conns connections
// and returns the timing, or one with a Note when wrk is missing or fails.
func runWrk(addr, script string, conns int, d time.Duration) Timing {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return Timing{Note: "wrk not installed (apt-get install wrk)"}
	}
	out, err := exec.Command(bin, fmt.Sprintf("-t%d", min(wrkThreads, conns)), fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(d.Seconds())),
		"--latency", "-s", script, "http://"+addr).CombinedOutput()
	if err != nil {
		return Timing{Note: fmt.Sprintf("wrk: %v: %s", err, tail(string(out), 300))}
	}
	return parseWrk(string(out), d)
}

// writeScript writes a wrk script into dir.
func writeScript(dir, name string, paths []string, zipf bool) (string, error) {
	file := filepath.Join(dir, name+".lua")
	return file, os.WriteFile(file, []byte(wrkScript(paths, zipf)), 0o644)
}

// searchPath is the request path of a character search for q.
func searchPath(q Query) string {
	v := url.Values{"search": {q.Text}, "categories": {"character"}}
	if q.Strict {
		v.Set("strict", "true")
	}
	return "/latest/search/?" + v.Encode()
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
