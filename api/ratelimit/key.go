package ratelimit

import (
	"encoding/binary"
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
func (l *Limiter) IPKey(addr netip.Addr, app string) Key { return ipKey(l.seed, addr, app) }

// ipKey is IPKey with seed.
func ipKey(seed maphash.Seed, addr netip.Addr, app string) Key {
	addr = addr.Unmap()
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		addr = p.Addr()
	}
	// The hot path (no token) hashes 17 bytes on the stack: a fraction
	// of what hashing the identity as a struct with a string costs.
	var b [17]byte
	b[0] = kindIP
	a := addr.As16()
	copy(b[1:], a[:])
	if app == "" {
		return Key(maphash.Bytes(seed, b[:]))
	}
	b[0] = kindIPApp
	var h maphash.Hash
	h.SetSeed(seed)
	h.Write(b[:])
	h.WriteString(app)
	return Key(h.Sum64())
}

// UserKey is the key of an authenticated request: ESI's
// <application>:<character> from the token.
func (l *Limiter) UserKey(app string, character int64) Key {
	var b [9]byte
	b[0] = kindUser
	binary.LittleEndian.PutUint64(b[1:], uint64(character))
	var h maphash.Hash
	h.SetSeed(l.seed)
	h.Write(b[:])
	h.WriteString(app)
	return Key(h.Sum64())
}
