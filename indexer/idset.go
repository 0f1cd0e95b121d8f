package indexer

import (
	"math/bits"
	"runtime"
	"sync"

	"gds/indexer/nametable"
)

// idSet is the set of records an incremental build changed, asked about
// once for every name of a table: tens of millions of questions against a
// set a hundredth that size. A map that large misses the cache on nearly
// every question; a bit array of the IDs' hashes, sixteen bits an ID (2 MiB
// for a million), answers most of them alone, and the map only the few
// whose bit is set (about one in sixteen of the IDs not in the set).
type idSet struct {
	bits  []uint64
	shift uint // a hash's top 64-shift bits pick its bit
	ids   map[int64]struct{}
}

// newIDSet holds every ID of the lists.
func newIDSet(lists ...[]int64) *idSet {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	logBits := max(6, bits.Len(uint(16*n))) // at least one word
	s := &idSet{
		bits:  make([]uint64, 1<<(logBits-6)),
		shift: uint(64 - logBits),
		ids:   make(map[int64]struct{}, n),
	}
	for _, l := range lists {
		for _, id := range l {
			h := s.hash(id)
			s.bits[h>>6] |= 1 << (h & 63)
			s.ids[id] = struct{}{}
		}
	}
	return s
}

// hash spreads IDs (often consecutive) over the bit array: Fibonacci
// hashing, the top bits of a multiplication by 2^64/φ.
func (s *idSet) hash(id int64) uint64 { return uint64(id) * 0x9E3779B97F4A7C15 >> s.shift }

// has reports whether id is in the set.
func (s *idSet) has(id int64) bool {
	h := s.hash(id)
	if s.bits[h>>6]&(1<<(h&63)) == 0 {
		return false
	}
	_, ok := s.ids[id]
	return ok
}

// len is the number of IDs in the set.
func (s *idSet) len() int { return len(s.ids) }

// ordinals returns, ascending, the ordinals of t whose IDs are in the set.
// The table is split into one stretch a core (a 50M-name table takes about
// two seconds of CPU to walk).
func (s *idSet) ordinals(t *nametable.Table) []uint32 {
	n := uint32(t.Len())
	parts := uint32(max(1, min(runtime.GOMAXPROCS(0), int(n>>16))))
	found := make([][]uint32, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for o := p * n / parts; o < (p+1)*n/parts; o++ {
				if s.has(t.ID(o)) {
					found[p] = append(found[p], o)
				}
			}
		})
	}
	wg.Wait()
	var all []uint32
	for _, f := range found {
		all = append(all, f...)
	}
	return all
}
