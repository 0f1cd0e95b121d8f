package nametable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
	"unsafe"

	"gds/snapshots/disk"
)

// Cells (GDSTBL04) hold each ordinal's ID and folded name together, so
// that a walk's candidate costs one cache miss where an ID beside the
// name's offset (GDSTBL03) and then the name cost two.
//
// Ordinals are in rank order, names of one length in runes together: each
// such run is a band of cells of one size, so an ordinal's cell is found
// by arithmetic. A cell is the ID less the table's base (uint32), the
// name's length in bytes (one byte) and the name, padded with zeros to the
// band's size. A band's size is the one that takes the least room: a
// longer name (a rune may take four bytes) does not fit its cell, which
// then holds overflowLen for the length, and the name is in the names
// section, found by its ordinal in the overflow index.
//
// Sections: secCells the cells; secBands the ID base (uint64), then per
// band its first ordinal and cell size (uint32 each) and where its cells
// start (uint64); secNames the names that overflow, one after another;
// secOverflow (ordinal, start) pairs of uint32 for them, ascending, and a
// last pair (the number of names, the names' total length).
const (
	tableMagicV4 = "GDSTBL04"
	cellHead     = 5   // ID and length
	overflowLen  = 255 // the length byte of a cell whose name is elsewhere
	maxCell      = cellHead + overflowLen - 1
	bandBytes    = 16
	overflowPair = 8
)

// GDSTBL04's sections in the places of older tables' ones.
const (
	secCells = secRecs
	secBands = secIDBase
)

// band is a run of ordinals with cells of one size.
type band struct {
	start uint32 // first ordinal
	size  uint32 // cell size in bytes
	off   uint64 // where its cells start in the cells section
}

// cellLayout is where a table's cells are: its bands and, for each
// 65,536-ordinal block, the band its first ordinal is in.
type cellLayout struct {
	cells     []byte
	bands     []band
	blockBand []uint16
	// overflow: ordinals whose names are not in their cells, and where
	// each name starts in names (one more start: where the last ends).
	overOrd   []uint32
	overStart []uint32
}

// cellOf is where ordinal o's cell starts in the cells section.
func (c *cellLayout) cellOf(o uint32) int {
	bd := c.bandOf(o)
	return int(bd.off) + int(o-bd.start)*int(bd.size)
}

// bandOf is the band of ordinal o.
func (c *cellLayout) bandOf(o uint32) *band {
	b := int(c.blockBand[o>>16])
	for b+1 < len(c.bands) && c.bands[b+1].start <= o {
		b++
	}
	return &c.bands[b]
}

// prefetchCell asks for the cache line of ordinal o's cell (both lines
// of a cell that spans two), without waiting for it: a walk asks as it
// finds a candidate, and reads the cell when it verifies the candidate's
// batch (see walk.push).
func (c *cellLayout) prefetchCell(o uint32) {
	bd := c.bandOf(o)
	at := unsafe.Add(unsafe.Pointer(unsafe.SliceData(c.cells)), uintptr(bd.off)+uintptr(o-bd.start)*uintptr(bd.size))
	prefetch(at)
	if end := unsafe.Add(at, bd.size-1); uintptr(end)>>6 != uintptr(at)>>6 {
		prefetch(end)
	}
}

// overflowName is the name of ordinal o, whose cell says it overflows.
func (t *Table) overflowName(o uint32) []byte {
	i, _ := slices.BinarySearch(t.cl.overOrd, o) // checked when the table was opened
	return t.names[t.cl.overStart[i]:t.cl.overStart[i+1]]
}

// planBands splits entries (in ordinal order) into bands, one per run of
// names of one length in runes, each with the cell size that takes the
// least room for its names and those that overflow.
func planBands(entries []Entry) []band {
	var bands []band
	var lens []int
	off := uint64(0)
	flush := func(start, end int) {
		if start == end {
			return
		}
		slices.Sort(lens)
		best, bestCost := 0, -1
		rest := 0 // bytes of the names longer than the candidate size
		for _, l := range lens {
			rest += l + overflowPair
		}
		for i := 0; i < len(lens); i++ {
			rest -= lens[i] + overflowPair
			if i+1 < len(lens) && lens[i+1] == lens[i] {
				continue
			}
			size := cellHead + lens[i]
			if size > maxCell {
				break
			}
			if cost := (end-start)*size + rest; bestCost < 0 || cost < bestCost {
				best, bestCost = size, cost
			}
		}
		if bestCost < 0 { // every name overflows a cell
			best = cellHead
		}
		bands = append(bands, band{start: uint32(start), size: uint32(best), off: off})
		off += uint64(end-start) * uint64(best)
	}
	start, runes := 0, -1
	for i, e := range entries {
		r := utf8.RuneCountInString(e.Folded)
		if r != runes {
			flush(start, i)
			start, runes, lens = i, r, lens[:0]
		}
		lens = append(lens, len(e.Folded))
	}
	flush(start, len(entries))
	return bands
}

// writeCells returns the sections of a GDSTBL04 table: cells (written as
// the file is, band by band), bands, overflowing names and their index.
func writeCells(entries []Entry, base int64, bands []band) (cells, bandSec, names, overflow section) {
	var over []uint32 // pairs
	var nameBytes uint32
	for b, bd := range bands {
		for o := int(bd.start); o < bandEnd(bands, b, len(entries)); o++ {
			if name := entries[o].Folded; cellHead+len(name) > int(bd.size) {
				over = append(over, uint32(o), nameBytes)
				nameBytes += uint32(len(name))
			}
		}
	}
	over = append(over, uint32(len(entries)), nameBytes)
	cells = func(w *sectionWriter) {
		var buf [maxCell]byte
		for b, bd := range bands {
			for o := int(bd.start); o < bandEnd(bands, b, len(entries)); o++ {
				e := entries[o]
				cell := buf[:bd.size]
				clear(cell)
				binary.LittleEndian.PutUint32(cell, uint32(e.ID-base))
				if cellHead+len(e.Folded) > int(bd.size) {
					cell[4] = overflowLen
				} else {
					cell[4] = byte(len(e.Folded))
					copy(cell[cellHead:], e.Folded)
				}
				w.write(cell)
			}
		}
	}
	bandSec = func(w *sectionWriter) {
		b := binary.LittleEndian.AppendUint64(nil, uint64(base))
		for _, bd := range bands {
			b = binary.LittleEndian.AppendUint32(b, bd.start)
			b = binary.LittleEndian.AppendUint32(b, bd.size)
			b = binary.LittleEndian.AppendUint64(b, bd.off)
		}
		w.write(b)
	}
	names = func(w *sectionWriter) {
		for i := 0; i+2 < len(over); i += 2 {
			w.writeString(entries[over[i]].Folded)
		}
	}
	return cells, bandSec, names, raw(disk.AsBytes(over))
}

// bandEnd is the ordinal after band b's last.
func bandEnd(bands []band, b, n int) int {
	if b+1 < len(bands) {
		return int(bands[b+1].start)
	}
	return n
}

// parseCells reads a GDSTBL04 table's cells and checks everything a
// lookup reads: bands that tile the ordinals and the cells section, every
// cell's length within its cell or overflowing, and an overflow index
// that names exactly those cells, within the names section.
func (t *Table) parseCells(cells, bandSec, overflow []byte) error {
	if len(bandSec) < 8 || (len(bandSec)-8)%bandBytes != 0 {
		return errors.New("bands damaged")
	}
	t.idBase = int64(binary.LittleEndian.Uint64(bandSec))
	c := &t.cl
	c.cells = cells
	for p := 8; p < len(bandSec); p += bandBytes {
		c.bands = append(c.bands, band{
			start: binary.LittleEndian.Uint32(bandSec[p:]),
			size:  binary.LittleEndian.Uint32(bandSec[p+4:]),
			off:   binary.LittleEndian.Uint64(bandSec[p+8:]),
		})
	}
	if (t.n == 0) != (len(c.bands) == 0) || len(c.bands) > 1<<16 {
		return errors.New("bands disagree with the number of names")
	}
	off := uint64(0)
	for b, bd := range c.bands {
		end := bandEnd(c.bands, b, t.n)
		if (b == 0 && bd.start != 0) || int(bd.start) >= end || bd.size < cellHead || bd.size > maxCell || bd.off != off {
			return fmt.Errorf("band %d damaged", b)
		}
		off += uint64(end-int(bd.start)) * uint64(bd.size)
	}
	if off != uint64(len(cells)) {
		return errors.New("cells disagree with their bands")
	}
	c.blockBand = make([]uint16, (t.n+0xffff)>>16)
	b := 0
	for blk := range c.blockBand {
		for b+1 < len(c.bands) && c.bands[b+1].start <= uint32(blk)<<16 {
			b++
		}
		c.blockBand[blk] = uint16(b)
	}
	if len(overflow)%overflowPair != 0 || len(overflow) < overflowPair {
		return errors.New("overflow index damaged")
	}
	pairs := disk.FromBytes[uint32](overflow)
	k := len(pairs)/2 - 1
	c.overOrd, c.overStart = make([]uint32, k), make([]uint32, k+1)
	for i := 0; i <= k; i++ {
		c.overStart[i] = pairs[2*i+1]
		if i < k {
			c.overOrd[i] = pairs[2*i]
		}
		if i > 0 && c.overStart[i] < c.overStart[i-1] {
			return errors.New("overflow index out of order")
		}
	}
	if pairs[2*k] != uint32(t.n) || int(c.overStart[k]) != len(t.names) {
		return errors.New("overflow index disagrees with the names")
	}
	next := 0 // the next overflow ordinal expected
	for b, bd := range c.bands {
		for o := int(bd.start); o < bandEnd(c.bands, b, t.n); o++ {
			l := int(cells[int(bd.off)+(o-int(bd.start))*int(bd.size)+4])
			if l == overflowLen {
				if next == k || int(c.overOrd[next]) != o {
					return fmt.Errorf("name %d overflows its cell but is not in the overflow index", o)
				}
				next++
			} else if cellHead+l > int(bd.size) {
				return fmt.Errorf("name %d out of range", o)
			}
		}
	}
	if next != k {
		return errors.New("overflow index names a name its cell holds")
	}
	return nil
}
