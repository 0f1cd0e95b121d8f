package ratelimit

import (
	"hash/maphash"
	"net/netip"
)

// Key identifies a client's bucket within a group: a keyed hash of who the
// client is, so a bucket costs 8 bytes of key whatever the identity's
// length. The seed is random per Limiter, so clients cannot pick values
// that collide with someone else's bucket.
type Key uint64

// Kinds of identity, hashed first so that no two kinds share a key.
const (
	kindIP byte = iota + 1
	kindIPApp
	kindUser
)

// IPKey is the key of a public request from addr, or of addr with the
// application of a token it sent (app != ""). IPv6 clients are keyed by
// their /64: one subscriber usually holds a whole /64, and keying single
// addresses would let them rotate through billions of buckets.
func (l *Limiter) IPKey(addr netip.Addr, app string) Key {
	addr = addr.Unmap()
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		addr = p.Addr()
	}
	kind := kindIP
	if app != "" {
		kind = kindIPApp
	}
	return Key(maphash.Comparable(l.seed, identity{kind: kind, addr: addr.As16(), app: app}))
}

// UserKey is the key of an authenticated request: ESI's
// <application>:<character> from the token.
func (l *Limiter) UserKey(app string, character int64) Key {
	return Key(maphash.Comparable(l.seed, identity{kind: kindUser, character: character, app: app}))
}

// identity is what a key is a hash of.
type identity struct {
	kind      byte
	addr      [16]byte
	character int64
	app       string
}
