// Package clientip says which address a request comes from: the TCP
// peer's, or, when the peer is a trusted proxy (a load balancer), the
// address the proxies recorded in X-Forwarded-For. The rate limiter, the
// error limiter and the request logs all ask the same Resolver, so they
// agree on who a client is.
package clientip

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds a request's client address. The zero Resolver trusts no
// proxy: the client is always the TCP peer.
type Resolver struct {
	trusted []netip.Prefix
}

var errZone = errors.New("zone")

// maxProxies bounds the --trusted-proxies list: it is walked per request.
const maxProxies = 64

// Parse reads a comma-separated list of CIDRs or single addresses of
// trusted proxies ("10.0.0.0/8,192.0.2.7,2001:db8::/32"); "" trusts none.
func Parse(list string) (Resolver, error) {
	var r Resolver
	for part := range strings.SplitSeq(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var p netip.Prefix
		var err error
		if strings.Contains(part, "/") {
			p, err = netip.ParsePrefix(part)
		} else {
			var a netip.Addr
			a, err = netip.ParseAddr(part)
			if a.Zone() != "" {
				err = errZone
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if err != nil || !p.IsValid() {
			return Resolver{}, fmt.Errorf("trusted proxy %q: want an address or CIDR, e.g. 10.0.0.0/8 or 192.0.2.7", part)
		}
		if len(r.trusted) == maxProxies {
			return Resolver{}, fmt.Errorf("trusted proxies: more than %d entries", maxProxies)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			// ::ffff:10.0.0.0/104 is 10.0.0.0/8: addresses are unmapped
			// before they are looked up.
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		r.trusted = append(r.trusted, p.Masked())
	}
	return r, nil
}

// String is the list as Parse accepts it.
func (r Resolver) String() string {
	parts := make([]string, len(r.trusted))
	for i, p := range r.trusted {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// Trusts reports whether addr is a trusted proxy.
func (r Resolver) Trusts(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range r.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Addr is the client address of req: the peer, unless the peer is a
// trusted proxy; then X-Forwarded-For is read from the right (each proxy
// appends the address it got the request from), skipping trusted proxies,
// and the first address no trusted proxy vouches for is the client. A
// client can prepend anything to the header, but never past its own
// proxy's entry. An entry that is not an address stops the walk at the
// last trusted hop. The zero Addr means the peer address was unreadable.
func (r Resolver) Addr(req *http.Request) netip.Addr {
	peer := peerAddr(req.RemoteAddr)
	if len(r.trusted) == 0 || !peer.IsValid() || !r.Trusts(peer) {
		return peer
	}
	client := peer
	hs := req.Header["X-Forwarded-For"]
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		for h != "" {
			var hop string
			if j := strings.LastIndexByte(h, ','); j >= 0 {
				h, hop = h[:j], h[j+1:]
			} else {
				h, hop = "", h
			}
			a, err := netip.ParseAddr(strings.TrimSpace(hop))
			if err != nil {
				return client
			}
			client = a.Unmap()
			if !r.Trusts(client) {
				return client
			}
		}
	}
	return client
}

// IP is Addr as text for logs and string-keyed tables ("" when the peer
// address was unreadable). A request not from a trusted proxy costs no
// allocation: the peer's text is a slice of RemoteAddr.
func (r Resolver) IP(req *http.Request) string {
	if len(r.trusted) == 0 {
		return peerHost(req.RemoteAddr)
	}
	a := r.Addr(req)
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// peerHost is the host part of a RemoteAddr ("192.0.2.1:1234",
// "[2001:db8::1]:80").
func peerHost(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	a, err := netip.ParseAddr(peerHost(remote))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}
