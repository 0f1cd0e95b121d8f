package query

import (
	"unicode/utf8"

	"gds/indexer/nametable"
)

// Match classes, in rank order.
const (
	classExact    = uint8(nametable.MatchExact)
	classPrefix   = uint8(nametable.MatchPrefix)
	classContains = uint8(nametable.MatchContains)
)

// hit is one ranked match in a table. Ordering is class, then name length
// in runes, then ID — which, within one table, is ordinal order within a
// class, so lengths are only counted when two tables' hits are merged.
// The ID is read when the match is found, its cell still in the cache.
type hit struct {
	class uint8
	o     uint32
	id    int64
}

// rankKey is what orders hits of different tables.
type rankKey struct {
	class uint8
	runes int
	id    int64
}

func keyOf(t *nametable.Table, h hit) rankKey {
	return rankKey{class: h.class, runes: utf8.RuneCount(t.Name(h.o)), id: h.id}
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

// walker runs one table search, keeps its ranked hits up to a limit and
// counts its work.
type walker struct {
	t      *nametable.Table
	text   []byte
	limit  int
	filter nametable.Filter
	stats  *Stats
	hits   []hit // may be in pooled memory (see searchScratch)
}

func (w *walker) add(class uint8, o uint32) bool { return w.addID(class, o, w.t.ID(o)) }

// addID is add for a hit whose ID the walk has read.
func (w *walker) addID(class uint8, o uint32, id int64) bool {
	if w.hits == nil {
		w.hits = make([]hit, 0, min(w.limit, 64))
	}
	w.hits = append(w.hits, hit{class: class, o: o, id: id})
	return len(w.hits) < w.limit
}

// strict collects names equal to the text.
func (w *walker) strict() {
	var st nametable.Stats
	w.t.Strict(w.text, &w.filter, &st, func(o uint32, id int64) bool { return w.addID(classExact, o, id) })
	w.stats.addWalk(st)
}

// contains collects names containing the text, exact and prefix matches
// first.
func (w *walker) contains() {
	var st nametable.Stats
	w.t.Contains(w.text, &w.filter, &st, w.limit, func(o uint32, m nametable.Match) bool { return w.add(uint8(m), o) })
	w.stats.addWalk(st)
}

// ids returns the IDs of the walker's hits, in order.
func (w *walker) ids() []int64 {
	out := make([]int64, len(w.hits))
	for i, h := range w.hits {
		out[i] = h.id
	}
	return out
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
	// Keys cost a name and an ID read each: only computed when the classes
	// tie, and once per hit.
	var ka, kb rankKey
	haveA, haveB := false, false
	for len(out) < limit && (i < len(a.hits) || j < len(b.hits)) {
		takeA := j == len(b.hits)
		if !takeA && i < len(a.hits) {
			if ha, hb := a.hits[i], b.hits[j]; ha.class != hb.class {
				takeA = ha.class < hb.class
			} else {
				if !haveA {
					ka, haveA = keyOf(a.t, ha), true
				}
				if !haveB {
					kb, haveB = keyOf(b.t, hb), true
				}
				takeA = ka.less(kb)
			}
		}
		if takeA {
			out = append(out, a.hits[i].id)
			i, haveA = i+1, false
		} else {
			out = append(out, b.hits[j].id)
			j, haveB = j+1, false
		}
	}
	return out
}
