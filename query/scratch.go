package query

import (
	"sync"
	"unsafe"
)

// A local's transient slices (its folded names, positions, keys and
// sort buffers, some 200 KB for a thousand names) are lent from one
// local to the next: allocated anew, they would have the collector run
// every few locals.

// scratch lends slices of T.
type scratch[T any] struct{ pool sync.Pool }

// maxScratchBytes is the largest slice a scratch keeps: room for a local
// of a thousand names that find ten namesakes each.
const maxScratchBytes = 1 << 20

// get lends a slice of n Ts, of any content; put gives it back.
func (s *scratch[T]) get(n int) *[]T {
	if p, ok := s.pool.Get().(*[]T); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]T, n, max(n, MaxLocalNames))
	return &b
}

// put gives back a slice get lent (grown by append, maybe), cleared so
// that it holds nothing alive.
func (s *scratch[T]) put(p *[]T) {
	var zero T
	if uintptr(cap(*p))*unsafe.Sizeof(zero) > maxScratchBytes {
		return
	}
	clear((*p)[:cap(*p)])
	s.pool.Put(p)
}

var (
	intScratch    scratch[int]
	int64Scratch  scratch[int64]
	uint32Scratch scratch[uint32]
	uint64Scratch scratch[uint64]
	byteScratch   scratch[byte]
	stringScratch scratch[string]
	bytesScratch  scratch[[]byte]
)
