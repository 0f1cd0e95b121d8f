package query

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer"
)

// Match classes, in rank order.
const (
	classExact uint8 = iota
	classPrefix
	classContains
)

// hit is one ranked match in a table. Ordering is class, then name length
// in runes, then ID — which, within one table, is ordinal order within a
// class, so lengths are only counted when two tables' hits are merged.
type hit struct {
	class uint8
	o     uint32
}

// rankKey is what orders hits of different tables.
type rankKey struct {
	class uint8
	runes int
	id    int64
}

func keyOf(t *indexer.Table, h hit) rankKey {
	return rankKey{class: h.class, runes: utf8.RuneCount(t.Name(h.o)), id: t.ID(h.o)}
}

func (a rankKey) less(b rankKey) bool {
	if a.class != b.class {
		return a.class < b.class
	}
	if a.runes != b.runes {
		return a.runes < b.runes
	}
	return a.id < b.id
}

// walker runs one table search and counts its work.
type walker struct {
	t     *indexer.Table
	text  []byte
	limit int
	allow *roaring.Bitmap // when set, only these ordinals (structure access)
	deny  *roaring.Bitmap // ordinals replaced by a language overlay
	stats *Stats
	hits  []hit
}

func (w *walker) add(class uint8, o uint32) bool {
	if w.hits == nil {
		w.hits = make([]hit, 0, min(w.limit, 64))
	}
	w.hits = append(w.hits, hit{class: class, o: o})
	return len(w.hits) < w.limit
}

// ids returns the IDs of the walker's hits, in order.
func (w *walker) ids() []int64 {
	out := make([]int64, len(w.hits))
	for i, h := range w.hits {
		out[i] = w.t.ID(h.o)
	}
	return out
}

// denied reports an ordinal the caller may not see or an overlay replaces.
// The allow list is also handed to intersect to drive the walk, but
// intersect may drop long lists, so it is always checked here too.
func (w *walker) denied(o uint32) bool {
	return (w.deny != nil && w.deny.Contains(o)) || (w.allow != nil && !w.allow.Contains(o))
}

// strict collects names equal to the text.
func (w *walker) strict() {
	w.t.Exact(w.text, func(o uint32) bool {
		w.stats.Candidates++
		if w.denied(o) {
			return true
		}
		w.stats.Verified++
		return w.add(classExact, o)
	})
}

// contains collects exact and prefix matches first (walking the names that
// start with the text's first trigram), then, if the limit is not reached,
// the other names containing the text.
func (w *walker) contains() {
	grams := w.gramLists(w.text)
	if grams == nil {
		return // some trigram of the text occurs in no name
	}
	if first := w.t.Prefix(indexer.Gram3(w.text)); first != nil {
		// The first trigram is implied by the prefix list.
		lists := pickLists(append([]gram{{pos: 0, bm: first, card: first.GetCardinality()}}, grams[1:]...), w.allow)
		complete := w.intersect(lists, func(o uint32) bool {
			if w.denied(o) {
				return true
			}
			name := w.t.Name(o)
			w.stats.Verified++
			if !bytes.HasPrefix(name, w.text) {
				return true
			}
			class := classPrefix
			if len(name) == len(w.text) {
				class = classExact
			}
			return w.add(class, o)
		})
		if !complete {
			return
		}
	}
	w.intersect(pickLists(grams, w.allow), func(o uint32) bool {
		if w.denied(o) {
			return true
		}
		name := w.t.Name(o)
		w.stats.Verified++
		if bytes.HasPrefix(name, w.text) || !bytes.Contains(name, w.text) {
			return true // prefix matches were all taken above
		}
		return w.add(classContains, o)
	})
}

// gram is the posting list of one trigram of the text.
type gram struct {
	pos  int
	bm   *roaring.Bitmap
	card uint64
}

// gramLists returns the posting list of each distinct trigram of text, the
// text's first trigram first, or nil when one has no postings.
func (w *walker) gramLists(text []byte) []gram {
	var seen [16]uint32
	keys := seen[:0]
	lists := make([]gram, 0, len(text)-2)
	for i := 0; i+3 <= len(text); i++ {
		g := indexer.Gram3(text[i:])
		if slices.Contains(keys, g) {
			continue
		}
		keys = append(keys, g)
		bm := w.t.Gram(g)
		if bm == nil {
			return nil
		}
		lists = append(lists, gram{pos: i, bm: bm, card: bm.GetCardinality()})
	}
	return lists
}

// maxLists is the most posting lists one walk intersects: each further list
// costs more than it removes, since verification checks the name anyway.
const maxLists = 3

// pickLists chooses the lists to intersect: the shortest first, then the
// shortest whose trigrams do not overlap those chosen. Trigrams of one
// common word are nearly redundant (all of "kirjuun" says little more than
// "kir"); trigrams from different parts of the text filter independently.
// The allow list (structure access), when set, always drives the walk too.
func pickLists(grams []gram, allow *roaring.Bitmap) []*roaring.Bitmap {
	slices.SortFunc(grams, func(a, b gram) int { return cmp.Compare(a.card, b.card) })
	var chosen []gram
	for _, g := range grams {
		if len(chosen) == maxLists {
			break
		}
		if !slices.ContainsFunc(chosen, func(c gram) bool { return abs(c.pos-g.pos) < 3 }) {
			chosen = append(chosen, g)
		}
	}
	// A short text may have no second disjoint trigram; an overlapping one
	// still helps.
	for _, g := range grams {
		if len(chosen) >= min(2, len(grams)) {
			break
		}
		if !slices.ContainsFunc(chosen, func(c gram) bool { return c.pos == g.pos }) {
			chosen = append(chosen, g)
		}
	}
	lists := make([]*roaring.Bitmap, 0, len(chosen)+1)
	for _, c := range chosen {
		lists = append(lists, c.bm)
	}
	if allow != nil {
		lists = append(lists, allow)
	}
	return lists
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// intersect calls fn with each ordinal present in every list, ascending,
// until fn returns false. It reports whether it saw every ordinal.
//
// It steps through the lists element by element (leapfrogging), which
// stops early and cheaply when matches come often. Every stepBudget steps
// it compares what finishing that way would cost (at the match rate seen so
// far) with one container-wise AND of the whole lists, and switches to the
// AND when that is cheaper: rare combinations of common trigrams.
func (w *walker) intersect(lists []*roaring.Bitmap, fn func(o uint32) bool) bool {
	stats := w.stats
	for _, l := range lists {
		if l == nil || l.IsEmpty() {
			return true
		}
	}
	slices.SortFunc(lists, func(a, b *roaring.Bitmap) int { return cmp.Compare(a.GetCardinality(), b.GetCardinality()) })
	if len(lists) == 1 {
		it := lists[0].Iterator()
		for it.HasNext() {
			stats.Candidates++
			if !fn(it.Next()) {
				return false
			}
		}
		return true
	}
	its := make([]roaring.IntPeekable, len(lists))
	var total uint64
	for i, l := range lists {
		its[i] = l.Iterator()
		total += l.GetCardinality()
	}
	startHits := len(w.hits)
	want := w.limit - startHits
	next := stepBudget
	var cur uint32
	for steps := 1; ; steps++ {
		if steps == next {
			found := len(w.hits) - startHits
			// Steps still needed at the rate so far, against the AND's cost
			// (a leapfrog step costs about as much as andCostRatio elements
			// of a container-wise AND).
			if found == 0 || uint64(steps)*uint64(want-found)/uint64(found)*andCostRatio > total {
				stats.Steps += steps
				stats.FullIntersections++
				return intersectAll(lists, cur, stats, fn)
			}
			next *= 2
		}
		aligned := true
		for _, it := range its {
			it.AdvanceIfNeeded(cur)
			if !it.HasNext() {
				stats.Steps += steps
				return true
			}
			if v := it.PeekNext(); v > cur {
				cur, aligned = v, false
				break
			}
		}
		if !aligned {
			continue
		}
		stats.Candidates++
		if !fn(cur) {
			stats.Steps += steps
			return false
		}
		if cur == math.MaxUint32 {
			stats.Steps += steps
			return true
		}
		cur++
	}
}

const (
	stepBudget   = 2048
	andCostRatio = 8
)

// intersectAll finishes an intersection from ordinal from with one
// container-wise AND of the whole lists.
func intersectAll(lists []*roaring.Bitmap, from uint32, stats *Stats, fn func(o uint32) bool) bool {
	and := roaring.FastAnd(lists...)
	it := and.Iterator()
	it.AdvanceIfNeeded(from)
	for it.HasNext() {
		stats.Candidates++
		if !fn(it.Next()) {
			return false
		}
	}
	return true
}

// mergeIDs merges the ranked hits of two walkers (a base table and a
// language overlay) into at most limit IDs.
func mergeIDs(a, b *walker, limit int) []int64 {
	if len(b.hits) == 0 {
		return a.ids()
	}
	if len(a.hits) == 0 {
		return b.ids()
	}
	out := make([]int64, 0, min(limit, len(a.hits)+len(b.hits)))
	i, j := 0, 0
	for len(out) < limit && (i < len(a.hits) || j < len(b.hits)) {
		if j == len(b.hits) || (i < len(a.hits) && keyOf(a.t, a.hits[i]).less(keyOf(b.t, b.hits[j]))) {
			out = append(out, a.t.ID(a.hits[i].o))
			i++
		} else {
			out = append(out, b.t.ID(b.hits[j].o))
			j++
		}
	}
	return out
}
