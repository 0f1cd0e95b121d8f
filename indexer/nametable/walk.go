package nametable

import (
	"bytes"
	"math/bits"
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
// equals text, ascending, until fn returns false.
func (t *Table) Strict(text []byte, f *Filter, st *Stats, fn func(o uint32) bool) {
	if f == nil {
		f = &Filter{}
	}
	t.Exact(text, func(o uint32) bool {
		st.Candidates++
		if f.denied(o) {
			return true
		}
		st.Verified++
		return fn(o)
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
	w.contains(s, limit, fn)
	st.add(w.stats)
}

// walk is one contains search of a table.
type walk struct {
	t       *Table
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

// intersect calls fn with each ordinal present in every list, ascending,
// from the block of ordinal from on, until fn returns false, and with some present in only some of them (see
// keptNum): fn verifies. It reports whether it saw every ordinal.
//
// It goes one 65,536-ordinal block at a time: blocks some list lacks are
// skipped from the headers alone; in the others the containers of all
// lists are intersected, the smallest first, and what remains joins the
// batch of candidates fn sees (see flush).
func (w *walk) intersect(s *blockScratch, lists []rlist, from uint32, fn func(o uint32) bool) bool {
	if len(lists) == 0 {
		return true
	}
	for i := range lists {
		lists[i].at, lists[i].tried, lists[i].kept = 0, 0, 0
	}
	w.blocks = 0
	w.pending = 0
	key := int(from >> 16)
	for {
		aligned := true
		for i := range lists {
			l := &lists[i]
			for l.at < l.n && int(l.key(l.at)) < key {
				l.at++
			}
			if l.at == l.n {
				return w.flush(s, fn)
			}
			if k := int(l.key(l.at)); k > key {
				key, aligned = k, false
				break
			}
		}
		if !aligned {
			continue
		}
		if !w.block(s, lists, uint32(key)<<16, fn) {
			return false
		}
		if key++; key > 0xffff {
			return w.flush(s, fn)
		}
	}
}

// block intersects the lists' containers of the block starting at ordinal
// hi (every list's cursor is on it) and calls fn with what remains.
//
// The smallest container goes first, then, smallest first, those whose
// trigrams do not overlap any taken so far (trigrams of one word say
// little more than one of them: "kirjuun" than "kir"; trigrams of
// different parts of the text filter independently), then the others.
// They are ordered by the cardinalities in the lists' headers; a
// container itself is read only when it is intersected. Once the set is
// empty the rest is skipped, and once it is down to a few ordinals
// (smallSet) verifying them costs less than searching the other lists.
func (w *walk) block(s *blockScratch, lists []rlist, hi uint32, fn func(o uint32) bool) bool {
	rs := s.refs[:len(lists)]
	for i := range lists {
		l := &lists[i]
		c := ref{card: int32(l.cardAt(l.at)), pos: int32(l.pos), list: int32(i)}
		j := i
		for ; j > 0 && rs[j-1].card > c.card; j-- {
			rs[j] = rs[j-1]
		}
		rs[j] = c
	}
	if len(rs) == 1 {
		return w.emitContainer(s, lists[rs[0].list].current(), hi, fn)
	}
	// Move the non-overlapping containers forward, keeping card order.
	for done := 1; done < len(rs); {
		j := done
		for ; j < len(rs) && overlaps(rs[:done], rs[j].pos, int32(w.width)); j++ {
		}
		if j == len(rs) {
			break
		}
		c := rs[j]
		copy(rs[done+1:j+1], rs[done:j])
		rs[done] = c
		done++
	}
	r := newBlockSet(s)
	rest := rs[1:]
	first := lists[rs[0].list].current()
	if second := &lists[rs[1].list]; first.kind == kindBitmap && rs[1].card > arrayMax && !second.isRun(second.at) {
		r.loadAnd(first, second.current())
		rest = rs[2:]
		w.stats.Steps++
	} else {
		r.load(first)
	}
	w.blocks++
	recheck := w.blocks%recheckEvery == 0
	for _, c := range rest {
		if r.n <= smallSet {
			if r.n == 0 {
				return true
			}
			break
		}
		l := &lists[c.list]
		if !recheck && l.tried >= minTried && l.kept*keptDen > l.tried*keptNum {
			continue // it has kept nearly everything so far
		}
		w.stats.Steps++
		n := r.n
		r.and(l.current())
		l.tried += n
		l.kept += r.n
	}
	if r.bitmap {
		return w.emitBitmap(s, &s.bits, hi, fn)
	}
	return w.emitArray(s, r.a, hi, fn)
}

// ref is a list's container in the current block, as block orders them.
type ref struct {
	card, pos, list int32
}

// smallSet: a block's set of at most this many ordinals is verified
// rather than intersected further: each further list costs a search per
// ordinal in a container elsewhere in the file, about what verifying the
// ordinal costs, and a set this small is mostly matches (2026-11-24, 10M
// names, the bench's texts: 4 took about 3% less CPU than intersecting
// on). Since a candidate costs one cache miss (GDSTBL04's cells), 16
// takes 2% less than 4, and 32 or 64 more (BenchmarkWalkTable, 2026-11-27,
// alternated 8 times).
const smallSet = 16

// A list that has kept more than keptNum/keptDen of the ordinals it was
// intersected with (at least minTried of them) is skipped in later blocks,
// but for one in recheckEvery: the lists taken before it imply it (often
// trigrams of one word), so intersecting it costs more than verifying the
// few names it would remove. Any subset of the lists finds every match.
const (
	keptNum      = 7
	keptDen      = 8
	minTried     = 32
	recheckEvery = 8
)

// noPos is the text position of a list that overlaps no trigram.
const noPos = -1 << 20

// overlaps reports whether a gram of width bytes at pos shares a byte of
// the text with one of rs.
func overlaps(rs []ref, pos, width int32) bool {
	for _, c := range rs {
		if c.pos-pos < width && pos-c.pos < width {
			return true
		}
	}
	return false
}

// emitBatch is how many candidates are fetched together before any is
// verified (2026-11-24, 10M names, the bench's texts: 32 fetched offsets
// first, then records, took about 10% less CPU than 16 fetched together).
// A batch fills across blocks: a rare text's few candidates a block are
// fetched together with the next blocks' (see flush).
const emitBatch = 32

// flush calls fn with the pending candidates, s.batch[:w.pending], after
// reading their IDs and names together (Table.fetch).
func (w *walk) flush(s *blockScratch, fn func(o uint32) bool) bool {
	n := w.pending
	w.pending = 0
	if w.t != nil { // nil in tests of intersect alone
		w.touch += w.t.fetch(s.batch[:n])
	}
	for _, o := range s.batch[:n] {
		w.stats.Candidates++
		if !fn(o) {
			return false
		}
	}
	return true
}

// push adds a candidate to the batch, flushing it when full.
func (w *walk) push(s *blockScratch, o uint32, fn func(o uint32) bool) bool {
	s.batch[w.pending] = o
	if w.pending++; w.pending == emitBatch {
		return w.flush(s, fn)
	}
	return true
}

func (w *walk) emitArray(s *blockScratch, vals []uint16, hi uint32, fn func(o uint32) bool) bool {
	for _, v := range vals {
		if !w.push(s, hi|uint32(v), fn) {
			return false
		}
	}
	return true
}

func (w *walk) emitBitmap(s *blockScratch, b *[bitmapWords]uint64, hi uint32, fn func(o uint32) bool) bool {
	for i, word := range b {
		for word != 0 {
			if !w.push(s, hi|uint32(i<<6|bits.TrailingZeros64(word)), fn) {
				return false
			}
			word &= word - 1
		}
	}
	return true
}

// emitContainer adds every ordinal of one container to the batch.
func (w *walk) emitContainer(s *blockScratch, c ctr, hi uint32, fn func(o uint32) bool) bool {
	switch c.kind {
	case kindArray:
		return w.emitArray(s, c.array(), hi, fn)
	case kindBitmap:
		return w.emitBitmap(s, c.bitmap(), hi, fn)
	}
	runs := c.runs()
	for i := 0; i < len(runs); i += 2 {
		for v, end := uint32(runs[i]), uint32(runs[i])+uint32(runs[i+1]); v <= end; v++ {
			if !w.push(s, hi|v, fn) {
				return false
			}
		}
	}
	return true
}
