package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

// A window opens at a client's first event and counts until it ends; the
// next event after the end opens a new one.
func TestWindowsCount(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	w := NewWindows(WindowsConfig{Window: time.Minute, Now: func() time.Time { return now }})
	k := w.Key(netip.MustParseAddr("192.0.2.1"))
	if c, left := w.Get(k, now); c != 0 || left != time.Minute {
		t.Fatalf("no window yet: %d, %v", c, left)
	}
	w.Count(k, now)
	if c, left := w.Count(k, now.Add(20*time.Second)); c != 2 || left != 40*time.Second {
		t.Fatalf("second event: %d, %v", c, left)
	}
	if c, _ := w.Get(k, now.Add(time.Minute)); c != 0 {
		t.Fatalf("after the end: %d counted", c)
	}
	if c, left := w.Count(k, now.Add(90*time.Second)); c != 1 || left != time.Minute {
		t.Fatalf("a new window: %d, %v", c, left)
	}
}

// A full Windows keeps its bound and forgets, among the entries near a
// newcomer's slot, the one with the fewest events: clients with many
// events outlive a flood of clients with one each.
func TestWindowsFloodKeepsHeavyClients(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	const maxClients = 64 * 32
	w := NewWindows(WindowsConfig{Window: time.Minute, Now: func() time.Time { return now }, MaxClients: maxClients})
	heavy := make([]Key, 100)
	for i := range heavy {
		heavy[i] = w.Key(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}))
		for range 10 {
			w.Count(heavy[i], now)
		}
	}
	for i := range 50 * maxClients {
		w.Count(w.Key(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})), now)
		if n := w.Len(); i%1000 == 0 && n > maxClients {
			t.Fatalf("%d clients kept, bound %d", n, maxClients)
		}
	}
	for i, k := range heavy {
		if c, _ := w.Get(k, now); c != 10 {
			t.Errorf("heavy client %d: %d counted after the flood, want 10", i, c)
		}
	}
}
