package nametable

import "math/bits"

// The block walk: the intersection of a text's posting lists one
// 65,536-ordinal block at a time, and the batches of candidates it hands
// to verification.

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

// emitBatch is how many candidates are asked for (push) before any is
// verified (2026-11-24, 10M names, the bench's texts: 32 fetched offsets
// first, then records, took about 10% less CPU than 16 fetched together;
// 2026-11-29, cells prefetched as they come: 16 about 4% more than 32, 64
// the same). A batch fills across blocks: a rare text's few candidates a
// block are asked for together with the next blocks' (see flush).
const emitBatch = 32

// flush calls fn with the pending candidates, s.batch[:w.pending]: their
// cells asked for as they came (push), or in older tables (no cells)
// after reading their IDs and names together (Table.fetch).
func (w *walk) flush(s *blockScratch, fn func(o uint32) bool) bool {
	n := w.pending
	w.pending = 0
	if w.t != nil && w.cells == nil { // w.t is nil in tests of intersect alone
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

// push adds a candidate to the batch, flushing it when full. Its cell is
// asked for at once: the cache misses of a batch overlap one another, the
// intersection of the blocks after it (a rare text's batch fills across
// blocks) and the verification of the candidates before it.
func (w *walk) push(s *blockScratch, o uint32, fn func(o uint32) bool) bool {
	if w.cells != nil {
		w.cells.prefetchCell(o)
	}
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
