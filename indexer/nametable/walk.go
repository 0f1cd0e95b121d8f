package nametable

import (
	"bytes"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Match says how a name matches a search text. Matches of one class come
// in ordinal order, which is rank order (shorter names first, then lower
// ID); the classes rank in this order.
type Match uint8

const (
	MatchExact Match = iota
	MatchPrefix
	MatchContains
)

// Stats counts the work of walks.
type Stats struct {
	// Candidates counts ordinals taken from posting lists.
	Candidates int
	// Verified counts names compared against the text.
	Verified int
	// Steps counts container intersections: one posting list's part of
	// one 65,536-ordinal block intersected with the other lists' parts.
	Steps int
}

func (s *Stats) add(o Stats) {
	s.Candidates += o.Candidates
	s.Verified += o.Verified
	s.Steps += o.Steps
}

// Filter narrows a walk. The zero Filter lets every ordinal through.
type Filter struct {
	// Hide holds ordinals not to return: those a language overlay or a
	// delta replaces (its Mask).
	Hide *roaring.Bitmap
	// allow, when set, holds the only ordinals to return (structure
	// access); allowRaw is the same list as stored, intersected with the
	// trigram lists.
	allow    *roaring.Bitmap
	allowRaw []byte
}

// AccessFilter returns a filter that lets through only the ordinals
// character may access, or false when it may access none.
func (t *Table) AccessFilter(character int64) (Filter, bool) {
	allow := t.access(character)
	if allow == nil {
		return Filter{}, false
	}
	return Filter{allow: allow, allowRaw: t.accessBytes(character)}, true
}

// denied reports an ordinal the caller may not see or an overlay replaces.
// The allow list is also intersected with the trigram lists; it is checked
// here too so that access never depends on how a walk picks its lists.
func (f *Filter) denied(o uint32) bool {
	return (f.Hide != nil && f.Hide.Contains(o)) || (f.allow != nil && !f.allow.Contains(o))
}

// Strict calls fn with the ordinals f lets through whose folded name
// equals text, ascending, and their IDs, until fn returns false.
func (t *Table) Strict(text []byte, f *Filter, st *Stats, fn func(o uint32, id int64) bool) {
	if f == nil {
		f = &Filter{}
	}
	t.Exact(text, func(o uint32, id int64) bool {
		st.Candidates++
		if f.denied(o) {
			return true
		}
		st.Verified++
		return fn(o, id)
	})
}

// Contains calls fn with the ordinals f lets through whose folded name
// contains text, until fn returns false or it has had limit of them
// (limit <= 0: no limit): exact and prefix matches first, then the
// others, each in rank order. text must be at least three bytes.
func (t *Table) Contains(text []byte, f *Filter, st *Stats, limit int, fn func(o uint32, m Match) bool) {
	if f == nil {
		f = &Filter{}
	}
	s := scratchPool.Get().(*blockScratch)
	defer scratchPool.Put(s)
	w := walk{t: t, text: text, f: *f}
	if t.cells {
		w.cells = &t.cl
	}
	w.contains(s, limit, fn)
	st.add(w.stats)
}

// walk is one contains search of a table.
type walk struct {
	t       *Table
	cells   *cellLayout // t's, when it has cells (GDSTBL04)
	text    []byte
	f       Filter
	width   int   // the bytes of the gram lists the walk intersects: 3 or 4
	exact   bool  // its one list holds exactly the names containing the text
	stats   Stats // counted here, added to the caller's at the end
	touch   byte  // keeps flush's reads
	blocks  int   // blocks intersected in the current walk
	pending int   // candidates in the batch, not yet given to fn
}

// maxHeld is the largest limit for which a walk holds back the matches
// that are neither exact nor prefix (see contains); the answers' limit
// is 500.
const maxHeld = 512

// contains emits the exact and prefix matches, then the other matches.
//
// With a limit of at most maxHeld it walks the text's gram lists once:
// exact and prefix matches go to emit as they come, the others are held
// back, in order, until limit of them are; past that ordinal only an
// exact or prefix match can still be among the first limit, so it goes on
// with only the names that start with the text's first gram (their
// prefix list, far shorter than that gram's list), each further match
// dropping the last match held; then the held matches go to emit. Without
// a limit (or above maxHeld) it walks the prefix list and then all the
// lists from the start, as holding every match would take unbounded
// memory.
func (w *walk) contains(s *blockScratch, limit int, emit func(o uint32, m Match) bool) {
	grams := w.gramLists(s, w.text)
	if grams == nil {
		return // some gram of the text occurs in no name
	}
	var allow rlist
	if w.f.allow != nil && !allow.view(w.f.allowRaw) {
		return
	}
	allow.pos = noPos
	var first rlist
	if b := w.prefixList(); b != nil {
		if !first.view(b) {
			return
		}
		first.pos = 0
	}
	hasPrefix := first.n > 0
	if hasPrefix && limit > 0 && limit <= maxHeld {
		w.containsHeld(s, grams, first, allow, limit, emit)
		return
	}
	if limit > 0 {
		fn, n := emit, 0
		emit = func(o uint32, m Match) bool {
			n++
			return fn(o, m) && n < limit
		}
	}
	if hasPrefix && !w.prefixMatches(s, grams, first, allow, 0, emit) {
		return
	}
	w.intersect(s, w.withAllow(s, allow, nil, grams), 0, func(o uint32) bool {
		if w.f.denied(o) {
			return true
		}
		name := w.t.Name(o)
		w.stats.Verified++
		if w.startsWith(name) || !w.holds(name) {
			return true // prefix matches were all taken above
		}
		return emit(o, MatchContains)
	})
}

// prefixList is the list of names that start with the text's first gram,
// as stored, or nil.
func (w *walk) prefixList() []byte {
	if w.width == 4 {
		return w.t.prefix4.bytes(gram4(w.text))
	}
	return w.t.prefixBytes(gram3(w.text))
}

// containsHeld is contains with a limit of at most maxHeld, for a text
// some name starts with the first gram of.
func (w *walk) containsHeld(s *blockScratch, grams []rlist, first, allow rlist, limit int, emit func(o uint32, m Match) bool) {
	held := s.held[:0]
	emitted := 0
	stopped := false // emit said stop
	last := uint32(0)
	// prefix emits an exact or prefix match, which drops the last match
	// held once there are more than limit.
	prefix := func(o uint32, m Match) bool {
		if !emit(o, m) {
			stopped = true
			return false
		}
		emitted++
		held = held[:min(len(held), limit-emitted)]
		return emitted < limit
	}
	complete := w.intersect(s, w.withAllow(s, allow, nil, grams), 0, func(o uint32) bool {
		if w.f.denied(o) {
			return true
		}
		name := w.t.Name(o)
		w.stats.Verified++
		if w.startsWith(name) {
			if !prefix(o, prefixClass(name, w.text)) {
				return false
			}
		} else if w.holds(name) {
			held = append(held, o)
		} else {
			return true
		}
		if emitted+len(held) < limit {
			return true
		}
		last = o
		return false
	})
	if stopped || emitted >= limit {
		return
	}
	// With limit matches up to ordinal last, only exact and prefix
	// matches past it can still rank among the first limit.
	if !complete {
		w.prefixMatches(s, grams, first, allow, last+1, prefix)
		if stopped || emitted >= limit {
			return
		}
	}
	for _, o := range held {
		if !emit(o, MatchContains) {
			return
		}
	}
}

// prefixMatches calls emit with the exact and prefix matches from ordinal
// from on, walking the prefix list of the text's first gram (first)
// with the others, until emit returns false. It reports whether it saw
// every ordinal.
func (w *walk) prefixMatches(s *blockScratch, grams []rlist, first, allow rlist, from uint32, emit func(o uint32, m Match) bool) bool {
	// The first gram is implied by the prefix list.
	return w.intersect(s, w.withAllow(s, allow, &first, grams[1:]), from, func(o uint32) bool {
		if o < from || w.f.denied(o) {
			return true
		}
		name := w.t.Name(o)
		w.stats.Verified++
		if !w.startsWith(name) {
			return true
		}
		return emit(o, prefixClass(name, w.text))
	})
}

// startsWith reports whether a candidate's name starts with the text; most
// do not, and differ in the first byte, which the cell's read brought in
// with the length.
func (w *walk) startsWith(name []byte) bool {
	return len(name) >= len(w.text) && name[0] == w.text[0] && bytes.Equal(name[:len(w.text)], w.text)
}

// holds reports whether a candidate's name contains the text: always, when
// the text is a single gram and the walk has no allow list (its one list
// is then every candidate's, and holds the names that contain the text;
// beside an allow list it may be left out, see block).
func (w *walk) holds(name []byte) bool {
	return (w.exact && w.f.allow == nil) || bytes.Contains(name, w.text)
}

// prefixClass is the class of a name that starts with text.
func prefixClass(name, text []byte) Match {
	if len(name) == len(text) {
		return MatchExact
	}
	return MatchPrefix
}

// withAllow returns first (when not nil) and rest, and the allow list
// when the walk has one, in scratch lists a walk may move the cursors of.
func (w *walk) withAllow(s *blockScratch, allow rlist, first *rlist, rest []rlist) []rlist {
	lists := s.phase[:0]
	if first != nil {
		lists = append(lists, *first)
	}
	lists = append(lists, rest...)
	if w.f.allow != nil {
		lists = append(lists, allow)
	}
	return lists
}

// maxLists is the most gram lists one walk intersects: the rarest of a
// long text's grams; any subset finds every match, as names are verified.
const maxLists = 16

// gramLists returns the posting list of each distinct gram of text (at
// most maxLists of them, the shortest), the text's first gram first, or
// nil when one has no postings. The grams are four bytes long when the
// table has their lists and the text is long enough, else trigrams (see
// walk.width): a four-byte gram's list is far shorter than those of its
// two trigrams, and it holds only names that have them next to each other.
// Where the table leaves a four-byte gram's list out, its two trigrams'
// lists stand in.
func (w *walk) gramLists(s *blockScratch, text []byte) []rlist {
	w.width = 3
	if w.t.hasQuad && len(text) >= 4 {
		w.width = 4
	}
	w.exact = len(text) == w.width
	g := gramSet{lists: s.grams[:0]}
	for i := 0; i+w.width <= len(text); i++ {
		if !w.addGram(&g, text, i) {
			return nil
		}
	}
	return g.lists
}

// addGram adds the list of the gram at text[i:] to g: its trigram's, its
// four-byte gram's, or where the table leaves that out, its two trigrams'.
// It reports false for a gram no name has.
func (w *walk) addGram(g *gramSet, text []byte, i int) bool {
	if w.width == 3 {
		return g.addTrigram(w.t, text, i)
	}
	q := gram4(text[i:])
	if b := w.t.quads.bytes(q); b == nil || len(b) > 0 {
		return g.add(uint64(q), b, i)
	}
	w.exact = false
	return g.addTrigram(w.t, text, i) && g.addTrigram(w.t, text, i+1)
}

// gramSet collects a text's distinct gram lists for gramLists; keys tell
// trigrams (1<<32 set) from four-byte grams.
type gramSet struct {
	seen    [64]uint64
	nseen   int
	lists   []rlist
	card    [maxLists]int // the lists' lengths, once there are more grams than lists
	counted bool
}

// addTrigram adds the list of the trigram at text[i:].
func (g *gramSet) addTrigram(t *Table, text []byte, i int) bool {
	k := gram3(text[i:])
	return g.add(1<<32|uint64(k), t.grams.bytes(k), i)
}

// add adds the list b of gram key at text position pos, unless it has
// it; it reports false for a gram no name has (b nil or empty).
func (g *gramSet) add(key uint64, b []byte, pos int) bool {
	if slices.Contains(g.seen[:g.nseen], key) {
		return true
	}
	if g.nseen < len(g.seen) {
		g.seen[g.nseen] = key
		g.nseen++
	}
	var l rlist
	if !l.view(b) {
		return false
	}
	l.pos = pos
	if len(g.lists) < cap(g.lists) {
		g.lists = append(g.lists, l)
		return true
	}
	// Keep the first gram (the prefix phase replaces it) and the shortest
	// of the others, counted only for texts this long.
	if !g.counted {
		for k := range g.lists {
			g.card[k] = g.lists[k].total()
		}
		g.counted = true
	}
	j := 1
	for k := 2; k < len(g.lists); k++ {
		if g.card[k] > g.card[j] {
			j = k
		}
	}
	if n := l.total(); n < g.card[j] {
		g.lists[j], g.card[j] = l, n
	}
	return true
}
