package nametable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unsafe"
)

// Posting lists are read in place from the table's mapped file, in the
// roaring portable serialization format
// (https://github.com/RoaringBitmap/RoaringFormatSpec): a header of
// (key, cardinality-1) pairs, then one container per 65,536-ordinal block
// (the key is the block: ordinal>>16), each a sorted array of up to 4,096
// 16-bit values, a 65,536-bit bitmap, or a list of runs. Intersections go
// block by block, so a search that has its results after a few blocks
// never reads the rest of its lists, and each block intersects the
// containers of every list of the text, smallest first.

const (
	cookieNoRuns = 12346
	cookieRuns   = 12347
	noOffsets    = 4    // fewer containers than this (with runs): no offset header
	arrayMax     = 4096 // the largest array container
	bitmapWords  = 1024 // 65,536 bits
)

// Container kinds.
const (
	kindArray uint8 = iota
	kindBitmap
	kindRun
)

// rlist is one serialized posting list read in place.
type rlist struct {
	b     []byte
	n     int                   // containers
	desc  int                   // byte offset of the (key, card-1) pairs
	offs  int                   // byte offset of the container offsets, or -1
	runs  int                   // byte offset of the is-run bitset, or -1
	small [noOffsets - 1]uint32 // container offsets when there is no offset header
	pos   int                   // where its trigram is in the text
	at    int                   // walk cursor: the first container not passed yet
	// Ordinals intersected with the list so far in the walk, and kept.
	tried, kept int
}

// view reads the header of b, a list check accepted when its table was
// opened: a walk reads its lists with no further checks. It reports false
// for an empty b (a trigram no name holds).
func (l *rlist) view(b []byte) bool {
	*l = rlist{b: b, offs: -1, runs: -1, pos: noPos}
	if len(b) < 4 {
		return false
	}
	if cookie := binary.LittleEndian.Uint32(b); cookie&0xffff == cookieRuns {
		l.n = int(cookie>>16) + 1
		l.runs = 4
		l.desc = 4 + (l.n+7)/8
		if l.n >= noOffsets {
			l.offs = l.desc + 4*l.n
			return true
		}
		off := l.desc + 4*l.n
		for i := 0; i < l.n; i++ {
			l.small[i] = uint32(off)
			off += l.size(i, off)
		}
		return true
	}
	l.n = int(binary.LittleEndian.Uint32(b[4:]))
	l.desc = 8
	l.offs = 8 + 4*l.n
	return true
}

// size is the byte size of container i, which starts at off.
func (l *rlist) size(i, off int) int {
	switch {
	case l.isRun(i):
		return 2 + 4*int(binary.LittleEndian.Uint16(l.b[off:]))
	case l.cardAt(i) > arrayMax:
		return 8 * bitmapWords
	default:
		return 2 * l.cardAt(i)
	}
}

// total is the list's number of ordinals.
func (l *rlist) total() int {
	t := 0
	for i := 0; i < l.n; i++ {
		t += l.cardAt(i)
	}
	return t
}

// check reports what is wrong with b as a posting list of a table of n
// names, or nil: a header view reads, keys ascending, every container
// within b and its ordinals below n, runs within their block and adding
// up to their container's cardinality. Open checks every list of a table
// once, so that a walk's reads stay in bounds whatever the file holds.
func check(b []byte, n int) error {
	if len(b) < 8 {
		return errors.New("shorter than a header")
	}
	l := rlist{b: b, offs: -1, runs: -1}
	switch cookie := binary.LittleEndian.Uint32(b); {
	case cookie&0xffff == cookieRuns:
		l.n, l.runs = int(cookie>>16)+1, 4
		l.desc = 4 + (l.n+7)/8
	case cookie == cookieNoRuns:
		l.n, l.desc = int(binary.LittleEndian.Uint32(b[4:])), 8
		if l.n == 0 || l.n > 1<<16 {
			return fmt.Errorf("bad container count %d", l.n)
		}
	default:
		return fmt.Errorf("unknown cookie %#x", cookie)
	}
	start := l.desc + 4*l.n
	if l.runs < 0 || l.n >= noOffsets {
		start += 4 * l.n
	}
	if start > len(b) {
		return errors.New("header out of range")
	}
	if l.runs >= 0 && l.n < noOffsets {
		// view finds these containers from their sizes: the run counts it
		// reads must be in b.
		for i, off := 0, start; i < l.n; i++ {
			if off+2 > len(b) {
				return fmt.Errorf("container %d out of range", i)
			}
			off += l.size(i, off)
		}
	}
	l.view(b)
	lastKey := (n - 1) >> 16
	for i := 0; i < l.n; i++ {
		key := int(l.key(i))
		if i > 0 && key <= int(l.key(i-1)) {
			return errors.New("keys out of order")
		}
		if n == 0 || key > lastKey {
			return fmt.Errorf("container %d holds ordinals past the table's %d names", i, n)
		}
		off := l.offset(i)
		if off < start || off+2 > len(b) || off+l.size(i, off) > len(b) {
			return fmt.Errorf("container %d out of range", i)
		}
		// Ordinals below the last block's start are all below n.
		limit := 1 << 16
		if key == lastKey {
			limit = n - key<<16
		}
		if err := checkContainer(l.container(i), limit); err != nil {
			return fmt.Errorf("container %d: %w", i, err)
		}
	}
	return nil
}

// checkContainer checks that c's values are below limit and, for runs,
// that they stay in the block and add up to c's cardinality.
func checkContainer(c ctr, limit int) error {
	switch c.kind {
	case kindArray:
		if limit < 1<<16 && int(slices.Max(c.array())) >= limit {
			return errors.New("ordinal out of range")
		}
	case kindBitmap:
		if limit == 1<<16 {
			break
		}
		b := c.bitmap()
		for w := limit >> 6; w < bitmapWords; w++ {
			keep := uint64(0) // bits below limit in word w
			if w == limit>>6 {
				keep = 1<<(limit&63) - 1
			}
			if b[w]&^keep != 0 {
				return errors.New("ordinal out of range")
			}
		}
	default:
		runs, total := c.runs(), 0
		for i := 0; i < len(runs); i += 2 {
			end := int(runs[i]) + int(runs[i+1])
			if end >= limit {
				return errors.New("run out of range")
			}
			total += int(runs[i+1]) + 1
		}
		if total != c.card {
			return errors.New("runs disagree with the cardinality")
		}
	}
	return nil
}

func (l *rlist) key(i int) uint16 { return binary.LittleEndian.Uint16(l.b[l.desc+4*i:]) }

func (l *rlist) cardAt(i int) int { return int(binary.LittleEndian.Uint16(l.b[l.desc+4*i+2:])) + 1 }

func (l *rlist) isRun(i int) bool { return l.runs >= 0 && l.b[l.runs+i/8]&(1<<(i%8)) != 0 }

// current returns the container at the walk's cursor.
func (l *rlist) current() ctr { return l.container(l.at) }

// offset is where container i starts in the list.
func (l *rlist) offset(i int) int {
	if l.offs >= 0 {
		return int(binary.LittleEndian.Uint32(l.b[l.offs+4*i:]))
	}
	return int(l.small[i])
}

// container returns container i, checked when the table was opened.
func (l *rlist) container(i int) ctr {
	off := l.offset(i)
	c := ctr{card: l.cardAt(i)}
	switch {
	case l.isRun(i):
		c.kind = kindRun
		c.n = int(binary.LittleEndian.Uint16(l.b[off:]))
		c.p = unsafe.Pointer(unsafe.SliceData(l.b[off+2:]))
	case c.card > arrayMax:
		c.kind = kindBitmap
		c.p = unsafe.Pointer(unsafe.SliceData(l.b[off:]))
	default:
		c.kind = kindArray
		c.p = unsafe.Pointer(unsafe.SliceData(l.b[off:]))
	}
	return c
}

// ctr is one container of a list, in place. Containers may be unaligned in
// the mapped file, which the hardware this runs on (amd64, arm64) allows for
// plain loads.
type ctr struct {
	p    unsafe.Pointer
	card int
	n    int // runs, for kindRun
	kind uint8
}

func (c ctr) array() []uint16 { return unsafe.Slice((*uint16)(c.p), c.card) }

func (c ctr) bitmap() *[bitmapWords]uint64 { return (*[bitmapWords]uint64)(c.p) }

// runs returns (start, length-1) pairs.
func (c ctr) runs() []uint16 { return unsafe.Slice((*uint16)(c.p), 2*c.n) }

// blockScratch is a walk's working memory, pooled so walks allocate
// nothing.
type blockScratch struct {
	arr   [2][arrayMax + vecSlack]uint16
	bits  [bitmapWords]uint64
	marks [bitmapWords]uint64 // all zero between uses
	grams [maxLists]rlist
	phase [maxLists + 2]rlist
	refs  [maxLists + 2]ref
	batch [emitBatch]uint32
	held  [maxHeld]uint32 // contains matches held back (see walk.contains)
}

var scratchPool = sync.Pool{New: func() any { return new(blockScratch) }}

// gallopRatio: an array this many times longer than the set is searched
// (galloping) rather than read through.
const gallopRatio = 32

// blockSet is the intersection of one block so far: an array of up to
// arrayMax values (a) or a bitmap (s.bits). The array may be a container
// of the mapped file, read in place until the first intersection: each
// intersection writes its result to the scratch array that does not hold
// the set (spare).
type blockSet struct {
	s      *blockScratch
	a      []uint16
	n      int // cardinality
	bitmap bool
}

func newBlockSet(s *blockScratch) blockSet { return blockSet{s: s} }

// spare returns a scratch array the set is not in.
func (r *blockSet) spare() *[arrayMax + vecSlack]uint16 {
	if len(r.a) > 0 && unsafe.SliceData(r.a) == &r.s.arr[0][0] {
		return &r.s.arr[1]
	}
	return &r.s.arr[0]
}

// load makes c the set.
func (r *blockSet) load(c ctr) {
	r.n = c.card
	switch c.kind {
	case kindArray:
		r.bitmap = false
		r.a = c.array()
	case kindBitmap:
		r.bitmap = true
		r.s.bits = *c.bitmap()
	default:
		runs := c.runs()
		if c.card <= arrayMax {
			r.bitmap = false
			out := &r.s.arr[0]
			k := 0
			for i := 0; i < len(runs); i += 2 {
				for v, end := uint32(runs[i]), uint32(runs[i])+uint32(runs[i+1]); v <= end; v++ {
					out[k] = uint16(v)
					k++
				}
			}
			r.a = out[:k]
			return
		}
		r.bitmap = true
		clear(r.s.bits[:])
		for i := 0; i < len(runs); i += 2 {
			setRange(&r.s.bits, uint32(runs[i]), uint32(runs[i])+uint32(runs[i+1]))
		}
	}
}

// loadAnd makes a ∩ b the set, for two bitmap containers, without copying
// a first.
func (r *blockSet) loadAnd(a, b ctr) {
	x, y := a.bitmap(), b.bitmap()
	n := 0
	for i := range r.s.bits {
		w := x[i] & y[i]
		r.s.bits[i] = w
		n += bits.OnesCount64(w)
	}
	r.n, r.bitmap = n, true
	r.shrink()
}

// and intersects the set with c. The loops over values keep a value by
// adding its membership bit to the output index rather than by branching:
// membership is unpredictable, a mispredicted branch costs more than the
// store.
func (r *blockSet) and(c ctr) {
	if r.bitmap {
		switch c.kind {
		case kindBitmap:
			y := c.bitmap()
			n := 0
			for i := range r.s.bits {
				w := r.s.bits[i] & y[i]
				r.s.bits[i] = w
				n += bits.OnesCount64(w)
			}
			r.n = n
			r.shrink()
		case kindArray:
			out := r.spare()
			k := keepMarked(&r.s.bits, c.array(), out)
			r.a, r.n, r.bitmap = out[:k], k, false
		default:
			runs := c.runs()
			from := uint32(0)
			for i := 0; i < len(runs); i += 2 {
				if start := uint32(runs[i]); start > from {
					clearRange(&r.s.bits, from, start-1)
				}
				from = uint32(runs[i]) + uint32(runs[i+1]) + 1
			}
			if from <= 0xffff {
				clearRange(&r.s.bits, from, 0xffff)
			}
			n := 0
			for _, w := range r.s.bits {
				n += bits.OnesCount64(w)
			}
			r.n = n
			r.shrink()
		}
		return
	}
	a := r.a[:r.n]
	out := r.spare()
	k := 0
	switch c.kind {
	case kindBitmap:
		k = keepMarked(c.bitmap(), a, out)
	case kindArray:
		b := c.array()
		if len(b) > gallopRatio*len(a) {
			// Few values against a long array: search for each, from where
			// it would be were b's values spread evenly over the block (a
			// list's are, near enough): fewer cache lines read than
			// galloping from the previous value's place.
			j := 0
			for _, v := range a {
				j = seek(b, j, max(j, int(v)*len(b)>>16), v)
				if j == len(b) {
					break
				}
				if b[j] == v {
					out[k] = v
					k++
				}
			}
			break
		}
		k = intersectArrays(a, b, out, &r.s.marks)
	default:
		runs := c.runs()
		j := 0
		for _, v := range a {
			for j < len(runs) && uint32(runs[j])+uint32(runs[j+1]) < uint32(v) {
				j += 2
			}
			if j == len(runs) {
				break
			}
			if runs[j] <= v {
				out[k] = v
				k++
			}
		}
	}
	r.a, r.n = out[:k], k
}

// keepMarked writes to out the values of b marked in m, in order, and
// returns how many. Four at a time: the loop's own instructions are a
// good part of its cost.
func keepMarked(m *[bitmapWords]uint64, b []uint16, out *[arrayMax + vecSlack]uint16) int {
	k := 0
	i := 0
	for ; i+4 <= len(b); i += 4 {
		v0, v1, v2, v3 := uint(b[i]), uint(b[i+1]), uint(b[i+2]), uint(b[i+3])
		out[k&(arrayMax-1)] = uint16(v0)
		k += int(m[v0>>6&(bitmapWords-1)] >> (v0 & 63) & 1)
		out[k&(arrayMax-1)] = uint16(v1)
		k += int(m[v1>>6&(bitmapWords-1)] >> (v1 & 63) & 1)
		out[k&(arrayMax-1)] = uint16(v2)
		k += int(m[v2>>6&(bitmapWords-1)] >> (v2 & 63) & 1)
		out[k&(arrayMax-1)] = uint16(v3)
		k += int(m[v3>>6&(bitmapWords-1)] >> (v3 & 63) & 1)
	}
	for _, v := range b[i:] {
		out[k&(arrayMax-1)] = v
		k += int(m[v>>6] >> (v & 63) & 1)
	}
	return k
}

// shrink turns a sparse bitmap set into an array, so that intersecting it
// with the next containers costs a probe per value rather than a pass over
// 1,024 words.
func (r *blockSet) shrink() {
	if !r.bitmap || r.n > arrayMax/4 {
		return
	}
	out := r.spare()
	k := 0
	for i, w := range r.s.bits {
		for w != 0 {
			out[k] = uint16(i<<6 | bits.TrailingZeros64(w))
			k++
			w &= w - 1
		}
	}
	r.a, r.bitmap = out[:k], false
}

// advance returns the first index at or after j where b[index] >= v.
func advance(b []uint16, j int, v uint16) int {
	if j >= len(b) || b[j] >= v {
		return j
	}
	step := 1
	lo := j
	hi := j + 1
	for hi < len(b) && b[hi] < v {
		lo = hi
		step *= 2
		hi = j + step
	}
	hi = min(hi, len(b))
	for lo+1 < hi {
		m := int(uint(lo+hi) >> 1)
		if b[m] < v {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// seek returns the first index at or after j where b[index] >= v, looking
// from e (j <= e < len(b)) both ways.
func seek(b []uint16, j, e int, v uint16) int {
	if b[e] < v {
		return advance(b, e, v)
	}
	hi, step := e, 1
	for hi-step >= j && b[hi-step] >= v {
		hi -= step
		step *= 2
	}
	lo := max(j, hi-step)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return hi
}

// setRange sets bits lo..hi (inclusive).
func setRange(b *[bitmapWords]uint64, lo, hi uint32) {
	fw, lw := lo>>6, hi>>6
	first, last := ^uint64(0)<<(lo&63), ^uint64(0)>>(63-hi&63)
	if fw == lw {
		b[fw] |= first & last
		return
	}
	b[fw] |= first
	for w := fw + 1; w < lw; w++ {
		b[w] = ^uint64(0)
	}
	b[lw] |= last
}

// clearRange clears bits lo..hi (inclusive).
func clearRange(b *[bitmapWords]uint64, lo, hi uint32) {
	fw, lw := lo>>6, hi>>6
	first, last := ^uint64(0)<<(lo&63), ^uint64(0)>>(63-hi&63)
	if fw == lw {
		b[fw] &^= first & last
		return
	}
	b[fw] &^= first
	for w := fw + 1; w < lw; w++ {
		b[w] = 0
	}
	b[lw] &^= last
}
