package disk

import (
	"sync"
	"testing"
)

// A value is held while any hold is: a second Put for a held key frees
// its own value and shares the first; each release counts once; the last
// frees the value and forgets the key, after which Take finds nothing.
func TestShared(t *testing.T) {
	var s Shared[string, int]
	freed := map[int]int{}
	freer := func(v int) func() error { return func() error { freed[v]++; return nil } }
	if _, _, ok := s.Take("a"); ok {
		t.Fatal("Take found a value in an empty Shared")
	}
	v1, r1 := s.Put("a", 1, freer(1))
	v2, r2 := s.Put("a", 2, freer(2))
	v3, r3, ok := s.Take("a")
	if v1 != 1 || v2 != 1 || !ok || v3 != 1 || freed[2] != 1 || freed[1] != 0 {
		t.Fatalf("values %d %d %d (ok %v), freed %v", v1, v2, v3, ok, freed)
	}
	_, rb := s.Put("b", 7, nil) // nothing to free
	r1()
	r1() // a second call does nothing
	r2()
	if freed[1] != 0 || s.Len() != 2 {
		t.Fatalf("freed %v with a hold left, %d keys", freed, s.Len())
	}
	r3()
	rb()
	if _, _, ok := s.Take("a"); ok || freed[1] != 1 || s.Len() != 0 {
		t.Fatalf("after the last release: found %v, freed %v, %d keys", ok, freed, s.Len())
	}
	// Concurrent holders of one key: every value put is freed exactly
	// once (at once when another was held, else with the last release),
	// and none is left.
	var mu sync.Mutex
	puts, frees := 0, map[int]int{}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, release, ok := s.Take("c")
			if !ok {
				mu.Lock()
				puts++
				mu.Unlock()
				_, release = s.Put("c", i, func() error { mu.Lock(); frees[i]++; mu.Unlock(); return nil })
			}
			release()
		})
	}
	wg.Wait()
	for v, n := range frees {
		if n != 1 {
			t.Errorf("value %d freed %d times", v, n)
		}
	}
	if s.Len() != 0 || len(frees) != puts {
		t.Fatalf("%d keys left; %d values put, %d freed", s.Len(), puts, len(frees))
	}
}
