package clientip

import (
	"net/netip"
	"testing"
)

// FuzzParse: --trusted-proxies is refused or yields a list that parses
// back to itself, and resolving any X-Forwarded-For with it never panics
// and always yields a valid address.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "10.0.0.0/8", "10.0.0.0/8,192.0.2.7", "2001:db8::/32, ::1", "::ffff:10.0.0.0/104",
		"10.0.0.0/33", "fe80::1%eth0", ",,", "0.0.0.0/0", "::/0"} {
		f.Add(s, "203.0.113.9, 10.0.0.1")
	}
	f.Fuzz(func(t *testing.T, list, xff string) {
		r, err := Parse(list)
		if err != nil {
			return
		}
		again, err := Parse(r.String())
		if err != nil || again.String() != r.String() {
			t.Fatalf("Parse(%q).String() = %q does not parse back (%v)", list, r.String(), err)
		}
		for _, remote := range []string{"10.0.0.1:80", "[2001:db8::1]:80", "198.51.100.1:9"} {
			a := r.Addr(request(remote, xff))
			if !a.IsValid() || a.Is4In6() {
				t.Fatalf("Addr from %s with X-Forwarded-For %q = %v", remote, xff, a)
			}
			if _, err := netip.ParseAddr(r.IP(request(remote, xff))); err != nil {
				t.Fatalf("IP is not an address: %v", err)
			}
		}
	})
}
