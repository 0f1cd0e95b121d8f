package main

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/api"
	"gds/api/admin"
)

// TestEndToEndRateLimit runs the real binary with a small search budget
// behind a trusted proxy (the test client on loopback): one client behind
// the proxy spends its bucket down to 429, another is unaffected, the
// first gets answers again once its tokens come back, and /metrics
// counts the refusals.
func TestEndToEndRateLimit(t *testing.T) {
	needsBinary(t)
	s := startServeBinary(t, "--snapshot", sampleSnapshot, "--data", t.TempDir(),
		"--rate-limit", "search=10/3s", "--trusted-proxies", "127.0.0.1/32,::1")

	search := func(client string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+s.public+"/latest/search/?search=jita&categories=solar_system", nil)
		req.Header.Set("X-Forwarded-For", client)
		code, hdr, body := exchange(t, s.client, req)
		return code, hdr, string(body)
	}

	const spender, bystander = "203.0.113.9", "203.0.113.10"
	var hdr http.Header
	status, admitted := 0, 0
	for range 30 { // 5 answers fit in 10 tokens, more when a slow machine lets tokens come back
		var body string
		status, hdr, body = search(spender)
		if status != http.StatusOK {
			if status != http.StatusTooManyRequests || !strings.Contains(body, `"error"`) {
				t.Fatalf("spent bucket: %d %s, want 429 with an error", status, body)
			}
			break
		}
		admitted++
		if hdr.Get(api.HeaderRateLimitGroup) != "search" || hdr.Get(api.HeaderRateLimitLimit) != "10/3s" ||
			hdr.Get(api.HeaderRateLimitUsed) != "2" || hdr.Get(api.HeaderRateLimitRemaining) == "" {
			t.Fatalf("rate-limit headers of a 200: %v", hdr)
		}
	}
	if status != http.StatusTooManyRequests || admitted < 5 {
		t.Fatalf("after %d answers: status %d, want 429 after at least 5", admitted, status)
	}
	retry, err := strconv.Atoi(hdr.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 4 {
		t.Errorf("Retry-After %q, want 1 to 4 seconds (3s window)", hdr.Get("Retry-After"))
	}
	if hdr.Get(api.HeaderRateLimitGroup) != "search" || hdr.Get(api.HeaderRateLimitUsed) != "0" {
		t.Errorf("rate-limit headers of the 429: %v", hdr)
	}
	if status, _, body := search(bystander); status != http.StatusOK {
		t.Fatalf("another client behind the proxy: %d %s", status, body)
	}

	// The spent tokens come back a window (and a tenth) after they were
	// spent: poll for it rather than sleep a guess.
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, _, _ := search(spender)
		if status == http.StatusOK {
			break
		}
		if status != http.StatusTooManyRequests {
			t.Fatalf("waiting for tokens: %d", status)
		}
		if time.Now().After(deadline) {
			t.Fatal("the spent bucket got no tokens back within 60 s of a 3 s window")
		}
		time.Sleep(200 * time.Millisecond)
	}

	resp, err := s.client.Get("http://" + s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	limited := -1.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), admin.MetricRateLimited+`{group="search"} `); ok {
			limited, _ = strconv.ParseFloat(v, 64)
		}
	}
	if limited < 1 {
		t.Errorf("%s{group=\"search\"} = %v, want at least 1", admin.MetricRateLimited, limited)
	}
}

func TestRateLimitFlags(t *testing.T) {
	parse := func(env func(string) string, args ...string) (serveConfig, error) {
		return parseServeConfig(&Env{Getenv: env, Stdout: io.Discard, Stderr: io.Discard},
			append([]string{"--data", t.TempDir()}, args...))
	}
	c, err := parse(envMap(), "--rate-limit", "search=10/3s", "--rate-limit", "static-data=100/1m,char-detail=50/1h")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RateLimits.spec.Groups; len(got) != 3 || got["search"].String() != "10/3s" ||
		got["static-data"].String() != "100/1m" || got["char-detail"].String() != "50/1h" || c.RateLimits.spec.Off {
		t.Errorf("--rate-limit repeated: %+v", c.RateLimits.spec)
	}
	c, err = parse(envMap("GDS_RATE_LIMIT", "off", "GDS_TRUSTED_PROXIES", "10.0.0.0/8"))
	if err != nil || !c.RateLimits.spec.Off || c.TrustedProxies.r.String() != "10.0.0.0/8" {
		t.Errorf("from the environment: %+v %v %v", c.RateLimits.spec, c.TrustedProxies.r, err)
	}
	for _, bad := range [][]string{
		{"--rate-limit", "nosuch=10/3s"},
		{"--rate-limit", "search=10/3d"},
		{"--rate-limit", "search=1/3s"},
		{"--rate-limit", "off", "--rate-limit", "search=10/3s"},
		{"--rate-limit", "search=10/3s", "--rate-limit", "search=20/3s"},
		{"--trusted-proxies", "10.0.0.0/40"},
		{"--trusted-proxies", "lb.example.com"},
	} {
		if _, err := parse(envMap(), bad...); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
