package typo

import (
	"bytes"
	"cmp"
	"slices"
	"sort"
	"unicode/utf8"
)

// Hit is a name found despite typos.
type Hit struct {
	O uint32
	// Dist is the edit distance between the whole text and the whole name,
	// MaxDist+1 when greater (a name matched word by word, with more
	// words than the text).
	Dist int
}

// MaxDist is the largest whole-name distance a Hit tells apart.
const MaxDist = 3

// Names reads a table's folded names by ordinal (nametable.Table does).
type Names interface {
	Name(o uint32) []byte
}

// Search limits, so that a text of common words costs a bounded walk.
const (
	maxCandidates   = 1 << 17 // ordinals taken from the rarest word's lists
	maxVerified     = 4096    // names read and measured against the text, a walk
	maxPrefixWords  = 32      // dictionary words a last, unfinished word may begin
	maxAlternatives = 24      // readings of the text with a space added or removed
)

// Search returns up to limit names matching text (folded) despite typos,
// fewest edits first, then by ordinal (rank). A name matches when each
// word of the text is within its budget (Edits) of a word of the name; the
// last word may also begin one, the text being typed. A space typed, lost
// or turned into a letter is tolerated too: the text is also read with
// two neighbouring words joined, and with a word split in two (at a rune
// that may have been the space) where both halves are words of the index.
// skip, when set, hides ordinals (an overlay's or delta's mask). An index
// keeping each name's first ordinal (KeepFirsts) finds one ordinal a name.
func (x *Index) Search(text []byte, names Names, skip func(uint32) bool, limit int) []Hit {
	q := words(text)
	if len(q) == 0 || limit <= 0 {
		return nil
	}
	typing := len(text) > 0 && q[len(q)-1].end == len(text)
	s := &searcher{x: x, names: names, skip: skip, text: appendRunes(nil, text), seen: map[uint32]Hit{}}
	s.budget = Edits(len(s.text))
	for _, alt := range x.readings(q) {
		s.reading(alt, typing)
	}
	hits := make([]Hit, 0, len(s.seen))
	for _, h := range s.seen {
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(a.Dist, b.Dist); c != 0 {
			return c
		}
		return cmp.Compare(a.O, b.O)
	})
	return hits[:min(limit, len(hits))]
}

// qword is a word of the text and where it ends.
type qword struct {
	b   []byte
	end int
}

func words(text []byte) []qword {
	var q []qword
	eachWord(text, func(w []byte, at int) { q = append(q, qword{b: w, end: at + len(w)}) })
	return q
}

// readings returns the text's words as typed, then with two neighbours
// joined, then with one word split where both halves are words.
func (x *Index) readings(q []qword) [][][]byte {
	base := make([][]byte, len(q))
	for i, w := range q {
		base[i] = w.b
	}
	out := [][][]byte{base}
	with := func(i, drop int, mid ...[]byte) {
		if len(out) < maxAlternatives {
			alt := slices.Concat(base[:i], mid, base[i+drop:])
			out = append(out, alt)
		}
	}
	for i := 0; i+1 < len(base); i++ {
		with(i, 2, slices.Concat(base[i], base[i+1]))
	}
	for i, w := range base {
		for p := 1; p < len(w); p++ {
			if !utf8.RuneStart(w[p]) {
				continue
			}
			if x.has(w[:p]) && x.has(w[p:]) {
				with(i, 1, w[:p], w[p:])
			}
			_, size := utf8.DecodeRune(w[p:])
			if p+size < len(w) && x.has(w[:p]) && x.has(w[p+size:]) {
				with(i, 1, w[:p], w[p+size:])
			}
		}
	}
	return out
}

// searcher is one Search's state.
type searcher struct {
	x      *Index
	names  Names
	skip   func(uint32) bool
	text   []rune
	budget int            // edits the whole text tolerates
	seen   map[uint32]Hit // the walks' ordinal → the hit reported for it
	cand   []uint32
	rs     []rune
	heap   [][]uint32 // the driver's lists, by their first ordinal
	lists  [][]uint32 // the other words' lists, what is left of them
	ends   []int      // where each other word's lists end in lists
	floors []uint32   // per other word, an ordinal none below which it has
}

// reading adds the names matching one reading of the text: each word
// matching a word of the name. A short word (no edits of its own) may
// instead be left free when the whole name is within the whole text's
// budget, so that "ann leex" finds "Ann Lee"; so may one that matches no
// word at all.
func (s *searcher) reading(ws [][]byte, typing bool) {
	matches := make([][]uint32, len(ws))
	var free []int
	for j, w := range ws {
		matches[j] = s.x.matching(w, typing && j == len(ws)-1)
		if len(matches[j]) == 0 {
			free = append(free, j)
		}
	}
	switch {
	case len(free) == 0:
		s.walk(matches, -1)
		if s.budget == 0 || len(ws) < 2 {
			return
		}
		for j, w := range ws {
			if Edits(utf8.RuneCount(w)) == 0 {
				// The short word with one edit, the whole name within
				// the text's budget.
				loose := slices.Clone(matches)
				loose[j] = s.x.matchingK(w, 1, typing && j == len(ws)-1)
				s.walkWithin(loose, -1, true)
			}
		}
	case len(free) == 1 && len(ws) > 1 && s.budget > 0:
		j := free[0]
		if loose := s.x.matchingK(ws[j], max(1, Edits(utf8.RuneCount(ws[j]))+1), typing && j == len(ws)-1); len(loose) > 0 {
			matches[j] = loose // one edit more than its own budget, the whole name within the text's
			s.walkWithin(matches, -1, true)
			return
		}
		s.walk(matches, j)
	}
}

// walk verifies the names of the rarest word's lists against the others'
// (but free's, when free >= 0: then the whole name must be within the
// text's budget).
func (s *searcher) walk(matches [][]uint32, free int) { s.walkWithin(matches, free, free >= 0) }

// walkWithin is walk, keeping only names within the text's budget when
// within is set.
func (s *searcher) walkWithin(matches [][]uint32, free int, within bool) {
	driver, least := -1, 0
	for j, m := range matches {
		if j == free {
			continue
		}
		total := 0
		for _, id := range m {
			total += len(s.x.postings(id))
		}
		if driver < 0 || total < least {
			driver, least = j, total
		}
	}
	s.candidates(matches, driver, free)
	pf, _ := s.names.(prefetcher)
	for i, o := range s.cand { // names in rank order: the shortest are verified
		if pf != nil && i%prefetchAhead == 0 {
			pf.Prefetch(s.cand[min(i+min(i, prefetchAhead), len(s.cand)):min(i+2*prefetchAhead, len(s.cand))])
		}
		if _, ok := s.seen[o]; ok {
			continue
		}
		name := s.names.Name(o)
		at, ok := s.namesake(o, name)
		if !ok {
			continue
		}
		s.rs = appendRunes(s.rs[:0], name)
		limit := MaxDist
		if within {
			limit = s.budget
		}
		d := Distance(s.text, s.rs, limit)
		if within && d > s.budget {
			continue
		}
		s.seen[o] = Hit{O: at, Dist: d}
	}
}

// prefetcher is what Names may also be (nametable.Table): a table that
// asks for names ahead of their reading.
type prefetcher interface{ Prefetch(batch []uint32) }

// prefetchAhead: a walk asks for the names of its next candidates this
// many at a time, while it verifies as many before them.
const prefetchAhead = 16

// matching returns the words of the index a text word may stand for: the
// word itself, those within its edit budget, and, for a word being typed,
// the first words it begins.
func (x *Index) matching(w []byte, prefix bool) []uint32 {
	return x.matchingK(w, Edits(utf8.RuneCount(w)), prefix)
}

// matchingK is matching with a budget of k edits.
func (x *Index) matchingK(w []byte, k int, prefix bool) []uint32 {
	var ids []uint32
	if id, ok := x.find(w); ok {
		ids = append(ids, id)
	}
	if k > 0 {
		wr := appendRunes(nil, w)
		var cand []uint32
		deletions(w, k, nil, func(h uint32) { cand = x.lookup(h, cand) })
		slices.Sort(cand)
		var rs []rune
		for _, id := range slices.Compact(cand) {
			rs = appendRunes(rs[:0], x.word(id))
			if Distance(wr, rs, k) <= k {
				ids = append(ids, id)
			}
		}
	}
	if prefix {
		lo := x.lowerBound(w)
		for id := lo; int(id) < x.Words() && id < lo+maxPrefixWords && bytes.HasPrefix(x.word(id), w); id++ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// lookup appends the words that have a deletion spelling hashed h.
func (x *Index) lookup(h uint32, to []uint32) []uint32 {
	b := h >> x.bucketSh
	es := x.deletes[x.buckets[b]:x.buckets[b+1]]
	i := sort.Search(len(es), func(i int) bool { return uint32(es[i]>>32) >= h })
	for ; i < len(es) && uint32(es[i]>>32) == h; i++ {
		to = append(to, uint32(es[i]))
	}
	return to
}

// lowerBound is the first word not less than w.
func (x *Index) lowerBound(w []byte) uint32 {
	return uint32(sort.Search(x.Words(), func(i int) bool { return bytes.Compare(x.word(uint32(i)), w) >= 0 }))
}

func (x *Index) find(w []byte) (uint32, bool) {
	i := x.lowerBound(w)
	return i, int(i) < x.Words() && bytes.Equal(x.word(i), w)
}

func (x *Index) has(w []byte) bool { _, ok := x.find(w); return ok }

// Tickers calls fn with the ordinal of each name whose ticker is text
// (folded), in ordinal order, until fn returns false.
func (x *Index) Tickers(text []byte, fn func(o uint32) bool) {
	t := len(x.tickOrds)
	tick := func(i int) []byte { return x.ticks[x.tickOffs[i]:x.tickOffs[i+1]] }
	i := sort.Search(t, func(i int) bool { return bytes.Compare(tick(i), text) >= 0 })
	for ; i < t && bytes.Equal(tick(i), text); i++ {
		if !fn(x.tickOrds[i]) {
			return
		}
	}
}

// TickerOf returns every ordinal's ticker (for rewriting a table's index
// from an older one, not for searches).
func (x *Index) TickerOf() map[uint32]string {
	m := make(map[uint32]string, len(x.tickOrds))
	for i, o := range x.tickOrds {
		m[o] = string(x.ticks[x.tickOffs[i]:x.tickOffs[i+1]])
	}
	return m
}
