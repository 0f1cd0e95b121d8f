package typo

import (
	"fmt"
	"unsafe"

	"gds/snapshots/disk"
)

// Namesakes is the name table an index describes, as KeepFirsts reads it
// (nametable.Table is one): its number of ordinals, every ordinal whose
// name a lower ordinal has too, and the ordinals of a name.
type Namesakes interface {
	Len() int
	Repeats(fn func(o uint32)) bool
	Exact(text []byte, fn func(o uint32, id int64) bool)
}

// KeepFirsts has the index's walks read, of each word's ordinals, only
// the first of each name (its lowest ordinal, where its namesakes rank):
// many pilots share a name and a suggestion is kept per name, so a walk
// of names rather than of pilots reads lists that grow with the distinct
// names, not with the table (the benchmark's 10M pilots: 20.3M ordinals
// in the lists, 4.1M of them firsts; 50M: 101.7M and 12.3M). The file
// holds the whole lists; the firsts' are made from them here, once, on
// anonymous memory outside the Go heap (16 MB at 10M, 49 MB at 50M).
//
// Search then finds one ordinal a name: its first or, when skip hides
// the first, the first of its namesakes (t.Exact) that skip leaves. t
// must be the index's table; a table that cannot tell its repeats leaves
// the lists whole. Call it once, before any search.
func (x *Index) KeepFirsts(t Namesakes) error {
	if t.Len() != x.n {
		return fmt.Errorf("typo index of %d names, table of %d", x.n, t.Len())
	}
	key, shared := x.firstsKey(t)
	if shared {
		if l, release, ok := keptFirsts.Take(key); ok {
			x.adoptFirsts(t, l.offs, l.posts, release)
			return nil
		}
	}
	repeat := make([]uint64, (x.n+63)/64)
	if !t.Repeats(func(o uint32) {
		if int(o) < x.n {
			repeat[o/64] |= 1 << (o % 64)
		}
	}) {
		return nil
	}
	first := func(o uint32) bool { return repeat[o/64]&(1<<(o%64)) == 0 }
	offs := make([]uint32, len(x.postOffs))
	read := releaseBehind(x, x.posts)
	for w := range x.Words() {
		k := uint32(0)
		for _, o := range x.postings(uint32(w)) {
			if first(o) {
				k++
			}
		}
		offs[w+1] = offs[w] + k
		read(int(x.postOffs[w+1]))
	}
	// Outside the heap: at the server's --gc-percent the collector would
	// let the heap grow to several times these lists before it ran.
	mem, free, err := disk.Anon(4 * (len(offs) + int(offs[len(offs)-1])))
	if err != nil {
		return fmt.Errorf("typo index: the lists of firsts: %w", err)
	}
	all := disk.FromBytes[uint32](mem)
	heldOffs, posts := all[:len(offs)], all[len(offs):]
	copy(heldOffs, offs)
	i := 0
	read = releaseBehind(x, x.posts)
	for j, o := range x.posts {
		if first(o) {
			posts[i] = o
			i++
		}
		if j%releaseStretch == 0 {
			read(j)
		}
	}
	if shared {
		var l firstsLists
		l, free = keptFirsts.Put(key, firstsLists{heldOffs, posts}, free)
		heldOffs, posts = l.offs, l.posts
	}
	x.adoptFirsts(t, heldOffs, posts, free)
	return nil
}

// adoptFirsts has the index's walks read the lists of firsts offs and
// posts of table t, which free lets go of.
func (x *Index) adoptFirsts(t Namesakes, offs, posts []uint32, free func() error) {
	if x.freeFirsts != nil {
		_ = x.freeFirsts()
	}
	x.postOffs, x.posts, x.same, x.freeFirsts = offs, posts, t, free
	if x.mapped != nil {
		// The whole lists were read to copy the firsts: their pages leave
		// the resident set again, as after Open's check (at 50M names
		// 388 MiB that searches never read).
		disk.Release(x.mapped)
	}
}

// releaseStretch is how many postings (4 bytes each) the check and
// KeepFirsts read between two releases of the pages behind them
// (releaseBehind): 16 MiB. A variable, so that a test can release often.
var releaseStretch = 4 << 20

// releaseBehind returns the function to call with how many entries of
// section s (of x.mapped) have been read in order: in an index
// opened lazily it releases their pages (disk.ReleasePages) a stretch at
// a time, so that a pass over a section does not hold it all resident at
// once, nor add it to the process's peak at a server's start. Elsewhere
// it does nothing.
func releaseBehind[T uint32 | uint64](x *Index, s []T) func(read int) {
	mapped := x.mapped
	if len(s) == 0 || len(mapped) == 0 {
		return func(int) {}
	}
	size := int(unsafe.Sizeof(s[0]))
	base := int(uintptr(unsafe.Pointer(&s[0])) - uintptr(unsafe.Pointer(&mapped[0])))
	done := base
	return func(read int) {
		if at := base + size*read; at-done >= 4*releaseStretch {
			disk.ReleasePages(mapped, done, at)
			done = at
		}
	}
}

// namesake returns the ordinal a walk reports for the first o of a name:
// o itself, or when skip hides it and the lists hold firsts only, its
// first namesake skip leaves; false when skip hides them all.
func (s *searcher) namesake(o uint32, name []byte) (uint32, bool) {
	if s.skip == nil || !s.skip(o) {
		return o, true
	}
	if s.x.same == nil {
		return 0, false
	}
	found, ok := uint32(0), false
	s.x.same.Exact(name, func(d uint32, _ int64) bool {
		if d > o && !s.skip(d) {
			found, ok = d, true
		}
		return !ok
	})
	return found, ok
}
