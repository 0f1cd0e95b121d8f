package affcol

import (
	"encoding/binary"
	"fmt"
	"math"

	"gds/snapshots/disk"
)

// An ID column is coded by the fewest bytes its values take: a code of 1
// or 2 bytes per row into a table of its distinct values when there are
// at most 65,536 of them (alliances of characters, factions), else the
// values themselves as uint32 when every one fits (EVE's IDs), else as
// int64. Its header word: the width in bytes (1, 2, 4 or 8) in the low
// byte, the number of distinct values (a coded column) above it.

// maxDistinct is the most distinct values a column is coded with.
const maxDistinct = 1 << 16

// idColumn is one ID column as read.
type idColumn struct {
	width int
	codes []byte   // width 1 or 2: the codes
	dict  []int64  // their values
	u32   []uint32 // width 4
	i64   []int64  // width 8
}

// at is row i's value.
func (c *idColumn) at(i int) int64 {
	switch c.width {
	case 1:
		return c.dict[c.codes[i]]
	case 2:
		return c.dict[binary.LittleEndian.Uint16(c.codes[2*i:])]
	case 4:
		return int64(c.u32[i])
	case 8:
		return c.i64[i]
	}
	return 0
}

// warm reads rows' values (see Column.Warm).
func (c *idColumn) warm(rows []int) byte {
	var touch byte
	n := len(c.codes) + len(c.u32) + len(c.i64)
	if c.width == 2 {
		n = len(c.codes) / 2
	}
	for _, i := range rows {
		if uint(i) >= uint(n) {
			continue
		}
		switch c.width {
		case 1:
			touch += c.codes[i]
		case 2:
			touch += c.codes[2*i]
		case 4:
			touch += byte(c.u32[i])
		case 8:
			touch += byte(c.i64[i])
		}
	}
	return touch
}

// parseIDColumn reads a column of n rows coded by word, taking its bytes
// with take.
func parseIDColumn(word uint64, n uint64, take func(uint64) ([]byte, error)) (idColumn, error) {
	c := idColumn{width: int(word & 0xff)}
	distinct := word >> 8
	switch c.width {
	case 1, 2:
		if distinct == 0 || distinct > maxDistinct || distinct > 1<<(8*c.width) {
			return c, fmt.Errorf("a coded column of %d values in %d bytes", distinct, c.width)
		}
		d, err := take(8 * distinct)
		if err != nil {
			return c, err
		}
		c.dict = disk.FromBytes[int64](d)
		if c.codes, err = take(uint64(c.width) * n); err != nil {
			return c, err
		}
		for _, code := range c.codeValues(n) {
			if uint64(code) >= distinct {
				return c, fmt.Errorf("code %d of %d values", code, distinct)
			}
		}
		return c, nil
	case 4, 8:
		if distinct != 0 {
			return c, fmt.Errorf("a column of width %d with a value table", c.width)
		}
		b, err := take(uint64(c.width) * n)
		if c.width == 4 {
			c.u32 = disk.FromBytes[uint32](b)
		} else {
			c.i64 = disk.FromBytes[int64](b)
		}
		return c, err
	}
	return c, fmt.Errorf("an ID column of width %d", c.width)
}

// codeValues yields the codes of a coded column of n rows, for the check
// at open (a few MB read once, where a wrong code would index outside
// the table at every lookup).
func (c *idColumn) codeValues(n uint64) []uint16 {
	out := make([]uint16, 0, 256)
	seen := [maxDistinct / 64]uint64{}
	for i := range int(n) {
		code := uint16(c.codes[i])
		if c.width == 2 {
			code = binary.LittleEndian.Uint16(c.codes[2*i:])
		}
		if seen[code/64]&(1<<(code%64)) == 0 {
			seen[code/64] |= 1 << (code % 64)
			out = append(out, code)
		}
	}
	return out
}

// idBuilder collects one ID column's values: their codes while there
// are few distinct values, else the values, as uint32 until one does not
// fit. A column of codes turns into one of values when a value past
// maxDistinct comes.
type idBuilder struct {
	hint     int // the rows expected
	u32      []uint32
	i64      []int64
	distinct map[int64]uint16 // nil once past maxDistinct
	order    []int64          // the distinct values, by code
	codes    []uint16         // each row's code, while distinct is kept
}

func newIDBuilder(n int) *idBuilder {
	return &idBuilder{hint: n, distinct: map[int64]uint16{}, codes: make([]uint16, 0, n)}
}

func (b *idBuilder) add(v int64) {
	if b.distinct != nil {
		code, ok := b.distinct[v]
		if ok || len(b.order) < maxDistinct {
			if !ok {
				code = uint16(len(b.order))
				b.distinct[v] = code
				b.order = append(b.order, v)
			}
			b.codes = append(b.codes, code)
			return
		}
		b.uncode()
	}
	b.addValue(v)
}

// uncode turns the column of codes into one of their values.
func (b *idBuilder) uncode() {
	codes, order := b.codes, b.order
	b.distinct, b.order, b.codes = nil, nil, nil
	b.u32 = make([]uint32, 0, max(b.hint, len(codes)+1))
	for _, c := range codes {
		b.addValue(order[c])
	}
}

// addValue appends v to a column of values.
func (b *idBuilder) addValue(v int64) {
	if b.i64 == nil && (v < 0 || v > math.MaxUint32) {
		b.i64 = make([]int64, len(b.u32), max(cap(b.u32), len(b.u32)+1))
		for i, x := range b.u32 {
			b.i64[i] = int64(x)
		}
		b.u32 = nil
	}
	if b.i64 != nil {
		b.i64 = append(b.i64, v)
	} else {
		b.u32 = append(b.u32, uint32(v))
	}
}

// coding is the column's header word and, for a coded column, its
// values by code.
func (b *idBuilder) coding() (word uint64, dict []int64) {
	switch {
	case b.distinct != nil && len(b.order) > 0:
		width := 1
		if len(b.order) > 256 {
			width = 2
		}
		return uint64(width) | uint64(len(b.order))<<8, b.order
	case b.i64 != nil:
		return 8, nil
	}
	return 4, nil
}

// value is row i as its coding stores it: its code, or its value.
func (b *idBuilder) value(i int) uint64 {
	switch {
	case b.distinct != nil:
		return uint64(b.codes[i])
	case b.i64 != nil:
		return uint64(b.i64[i])
	}
	return uint64(b.u32[i])
}

// encode returns the column's header word and its GDSAFF01 sections.
func (b *idBuilder) encode(n int) (uint64, [][]byte) {
	word, dict := b.coding()
	switch width := int(word & 0xff); {
	case dict != nil:
		codes := make([]byte, width*n)
		for i := range n {
			putWidth(codes[width*i:], width, b.value(i))
		}
		return word, [][]byte{disk.AsBytes(dict), codes}
	case width == 8:
		return word, [][]byte{disk.AsBytes(b.i64)}
	}
	return word, [][]byte{disk.AsBytes(b.u32)}
}
