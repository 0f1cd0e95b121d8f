package disk

import "sync"

// Shared holds values made from files (what a check found, lists built at
// open) while anything holds them, keyed by what names the files: their
// FileIDs, so that a generation and the next, which share unchanged files
// by hard links, share what was made from them. A key is kept no longer
// than a holder keeps its file open or mapped, so its FileIDs name no
// other file meanwhile. The zero value is empty and ready.
type Shared[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*sharedValue[V]
}

type sharedValue[V any] struct {
	v    V
	free func() error // nil: nothing to free
	refs int
}

// Take returns the value held for k, if there is one, and the function
// that lets go of this hold.
func (s *Shared[K, V]) Take(k K) (v V, release func() error, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := s.m[k]
	if sv == nil {
		return v, nil, false
	}
	sv.refs++
	return sv.v, s.releaser(k, sv), true
}

// Put holds v for k, free letting go of it with the last hold, and returns
// the value to use and the function that lets go of this hold: the value
// another holder put for k meanwhile, if one did (v is freed then).
func (s *Shared[K, V]) Put(k K, v V, free func() error) (V, func() error) {
	s.mu.Lock()
	sv := s.m[k]
	if sv != nil {
		sv.refs++
		s.mu.Unlock()
		if free != nil {
			_ = free()
		}
		return sv.v, s.releaser(k, sv)
	}
	if s.m == nil {
		s.m = map[K]*sharedValue[V]{}
	}
	sv = &sharedValue[V]{v: v, free: free, refs: 1}
	s.m[k] = sv
	s.mu.Unlock()
	return v, s.releaser(k, sv)
}

// Len is the number of keys held.
func (s *Shared[K, V]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// releaser returns the function that drops one hold of sv, freeing its
// value with the last; a second call does nothing.
func (s *Shared[K, V]) releaser(k K, sv *sharedValue[V]) func() error {
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			s.mu.Lock()
			sv.refs--
			last := sv.refs == 0
			if last && s.m[k] == sv {
				delete(s.m, k)
			}
			s.mu.Unlock()
			if last && sv.free != nil {
				err = sv.free()
			}
		})
		return err
	}
}
