package clientip

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func request(remote string, xff ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	for _, h := range xff {
		r.Header.Add("X-Forwarded-For", h)
	}
	return r
}

func TestNoTrustedProxies(t *testing.T) {
	var r Resolver
	// A client that sends X-Forwarded-For does not pick its address.
	req := request("198.51.100.7:5555", "203.0.113.9")
	if got := r.IP(req); got != "198.51.100.7" {
		t.Errorf("IP = %q, want the peer", got)
	}
	if got := r.Addr(req).String(); got != "198.51.100.7" {
		t.Errorf("Addr = %q, want the peer", got)
	}
	if got := r.IP(request("[2001:db8::1]:443")); got != "2001:db8::1" {
		t.Errorf("IPv6 peer: %q", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { r.IP(req) }); allocs != 0 {
		t.Errorf("IP allocates %v times per request without proxies", allocs)
	}
}

func TestTrustedProxies(t *testing.T) {
	r, err := Parse("10.0.0.0/8, 192.0.2.10,2001:db8:ffff::/48")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"trusted proxy names the client", "10.1.2.3:80", []string{"203.0.113.9"}, "203.0.113.9"},
		{"untrusted peer's header is ignored (spoofed)", "198.51.100.7:80", []string{"203.0.113.9"}, "198.51.100.7"},
		{"client-prepended entries stop at the first untrusted hop",
			"10.1.2.3:80", []string{"1.1.1.1, 203.0.113.9"}, "203.0.113.9"},
		{"chains of trusted proxies are skipped",
			"10.1.2.3:80", []string{"203.0.113.9, 192.0.2.10, 10.9.9.9"}, "203.0.113.9"},
		{"several headers read as one list, last first",
			"10.1.2.3:80", []string{"1.1.1.1, 203.0.113.9", "10.0.0.5"}, "203.0.113.9"},
		{"a garbage hop stops at the last trusted one", "10.1.2.3:80", []string{"evil, 10.0.0.5"}, "10.0.0.5"},
		{"no header: the proxy itself", "10.1.2.3:80", nil, "10.1.2.3"},
		{"all trusted: the leftmost", "10.1.2.3:80", []string{"10.0.0.1"}, "10.0.0.1"},
		{"IPv6 proxy and client", "[2001:db8:ffff::1]:80", []string{"2001:db8:1::5"}, "2001:db8:1::5"},
		{"mapped addresses are unmapped", "[::ffff:10.1.2.3]:80", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"empty entries are garbage", "10.1.2.3:80", []string{"203.0.113.9,"}, "10.1.2.3"},
	} {
		if got := r.IP(request(c.remote, c.xff...)); got != c.want {
			t.Errorf("%s: IP = %q, want %q", c.name, got, c.want)
		}
	}
	if got := r.String(); got != "10.0.0.0/8,192.0.2.10/32,2001:db8:ffff::/48" {
		t.Errorf("String() = %q", got)
	}
}

func TestParse(t *testing.T) {
	for _, ok := range []string{"", " ", "10.0.0.0/8", "10.1.2.3/8", "::1", "::ffff:10.0.0.0/104", "192.0.2.1,,192.0.2.2"} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "10.0.0", "example.com", "fe80::1%eth0", "10.0.0.0/8/8", "*"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	r, _ := Parse("::ffff:10.0.0.0/104")
	if got := r.IP(request("10.200.0.1:80", "203.0.113.9")); got != "203.0.113.9" {
		t.Errorf("a mapped CIDR does not trust its IPv4 addresses: %q", got)
	}
	r, _ = Parse("10.1.2.3/8")
	if r.String() != "10.0.0.0/8" {
		t.Errorf("a CIDR with host bits is not masked: %q", r.String())
	}
}
