package affcol

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"gds/snapshots/disk"
)

// A GDSAFF02 file holds each record's fields in one row of a fixed
// width, a power of two of at most 64 bytes, the rows starting on a
// 64-byte boundary: a row never spans two cache lines, so a lookup reads
// one line for the IDs and the name's place, then the name.

// magicRows is the row-major layout's magic.
const magicRows = "GDSAFF02"

// rowsAt is where the rows start: the header's ten words, padded to a
// cache line.
const rowsAt = 128

// rowLayout is where each field lies in a row and how it is coded.
type rowLayout struct {
	b        []byte // the rows
	width    int    // bytes a row
	lenWidth int    // bytes of a text's length: 1, 2 or 4
	ids      [3]rowID
	text     [2]rowText
}

// rowID is an ID field of a row: width bytes at at (0: absent), a code
// into dict when width is 1 or 2.
type rowID struct {
	at, width int
	dict      []int64
}

// rowText is a text field of a row: a uint32 offset into text at at,
// then the text's length.
type rowText struct {
	at      int
	present bool
	text    []byte
}

// layRow lays out a row: the ID fields of the widths idWidth (0 for one
// absent), then each text present as a uint32 offset and a length of
// lenWidth bytes. width is their sum rounded up to a power of two.
func layRow(idWidth [3]int, texts [2]bool, lenWidth int) (ids [3]int, text [2]int, width int) {
	sum := 0
	for k, w := range idWidth {
		ids[k], sum = sum, sum+w
	}
	for k, present := range texts {
		if present {
			text[k], sum = sum, sum+4+lenWidth
		}
	}
	if sum == 0 {
		return ids, text, 0
	}
	return ids, text, 1 << bits.Len(uint(sum-1))
}

// lengthWidth is the bytes a text length of at most longest takes.
func lengthWidth(longest uint32) int {
	switch {
	case longest <= 0xff:
		return 1
	case longest <= 0xffff:
		return 2
	}
	return 4
}

// row is row i's bytes.
func (l *rowLayout) row(i int) []byte { return l.b[i*l.width : (i+1)*l.width] }

// id is the value of ID field f in row.
func (f *rowID) id(row []byte) int64 {
	b := row[f.at:]
	switch f.width {
	case 1:
		return f.dict[b[0]]
	case 2:
		return f.dict[binary.LittleEndian.Uint16(b)]
	case 4:
		return int64(binary.LittleEndian.Uint32(b))
	case 8:
		return int64(binary.LittleEndian.Uint64(b))
	}
	return 0
}

// str is text field k of row, aliasing the file.
func (l *rowLayout) str(k int, row []byte) ([]byte, error) {
	t := &l.text[k]
	if !t.present {
		return nil, nil
	}
	off := uint64(binary.LittleEndian.Uint32(row[t.at:]))
	end := off + l.length(row[t.at+4:])
	if end > uint64(len(t.text)) {
		return nil, ErrDamaged
	}
	return t.text[off:end], nil
}

// length reads a text's length.
func (l *rowLayout) length(b []byte) uint64 {
	switch l.lenWidth {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	}
	return uint64(binary.LittleEndian.Uint32(b))
}

// warm reads rows' lines, then their texts' first bytes (see
// Column.Warm).
func (l *rowLayout) warm(rows []int, n int) byte {
	var touch byte
	if l.width == 0 {
		return 0
	}
	for _, i := range rows {
		if uint(i) < uint(n) {
			touch += l.b[i*l.width]
		}
	}
	for k := range l.text {
		t := &l.text[k]
		if !t.present {
			continue
		}
		for _, i := range rows {
			if uint(i) < uint(n) {
				if off := binary.LittleEndian.Uint32(l.b[i*l.width+t.at:]); int(off) < len(t.text) {
					touch += t.text[off]
				}
			}
		}
	}
	return touch
}

// parseRows reads the rest of a GDSAFF02 file of n rows of fields, its
// header's words in words (after magic, n and fields).
func parseRows(b []byte, n uint64, fields Fields, read func(from, to int)) (*Column, error) {
	c := &Column{n: int(n), fields: fields, rows: &rowLayout{}}
	l := c.rows
	word := func(k int) uint64 { return binary.LittleEndian.Uint64(b[24+8*k:]) }
	if len(b) < rowsAt {
		return nil, fmt.Errorf("truncated header: %d bytes", len(b))
	}
	var idWidth [3]int
	var distinct [3]uint64
	for k, f := range idOrder {
		w := word(k)
		if (fields&f == 0) != (w == 0) {
			return nil, fmt.Errorf("column %d: coding %#x for fields %#x", k, w, fields)
		}
		idWidth[k], distinct[k] = int(w&0xff), w>>8
		switch idWidth[k] {
		case 0, 4, 8:
			if distinct[k] != 0 {
				return nil, fmt.Errorf("a column of width %d with a value table", idWidth[k])
			}
		case 1, 2:
			if distinct[k] == 0 || distinct[k] > maxDistinct || distinct[k] > 1<<(8*idWidth[k]) {
				return nil, fmt.Errorf("a coded column of %d values in %d bytes", distinct[k], idWidth[k])
			}
		default:
			return nil, fmt.Errorf("an ID column of width %d", idWidth[k])
		}
	}
	texts := [2]bool{fields&Name != 0, fields&Ticker != 0}
	l.lenWidth = int(word(3))
	if (texts[0] || texts[1]) != (l.lenWidth != 0) || (l.lenWidth != 0 && l.lenWidth != 1 && l.lenWidth != 2 && l.lenWidth != 4) {
		return nil, fmt.Errorf("text lengths of %d bytes for fields %#x", l.lenWidth, fields)
	}
	idAt, textAt, width := layRow(idWidth, texts, l.lenWidth)
	if word(4) != uint64(width) {
		return nil, fmt.Errorf("rows of %d bytes, the fields take %d", word(4), width)
	}
	l.width = width
	p := uint64(rowsAt)
	take := func(size uint64) ([]byte, error) {
		if size > uint64(len(b))-p {
			return nil, fmt.Errorf("truncated: %d bytes, need %d more at %d", len(b), size, p)
		}
		s := b[p : p+size]
		if p += disk.Pad8(size); p > uint64(len(b)) {
			return nil, fmt.Errorf("truncated padding at %d", len(b))
		}
		return s, nil
	}
	var err error
	if l.b, err = take(n * uint64(width)); err != nil {
		return nil, err
	}
	for k := range idOrder {
		l.ids[k] = rowID{at: idAt[k], width: idWidth[k]}
		if distinct[k] == 0 {
			continue
		}
		d, err := take(8 * distinct[k])
		if err != nil {
			return nil, err
		}
		l.ids[k].dict = disk.FromBytes[int64](d)
	}
	for k, present := range texts {
		if !present {
			continue
		}
		l.text[k] = rowText{at: textAt[k], present: true}
		if l.text[k].text, err = take(word(5 + k)); err != nil {
			return nil, err
		}
	}
	if p != uint64(len(b)) {
		return nil, fmt.Errorf("%d bytes, the layout says %d", len(b), p)
	}
	return c, l.checkCodes(int(n), func(from, to int) { read(rowsAt+from, rowsAt+to) })
}

// checkStretch is how many rows checkCodes checks before it tells read
// which bytes it is done with: Open lets go of a mapped column's pages
// (disk.ReleasePages), where the rows of 50M characters (800 MB) would
// otherwise all be resident after the check, beside the tables a server
// holds. Tests lower it.
var checkStretch = 1 << 22

// checkCodes refuses a code outside its field's table, read once at open
// where it would index outside the table at every lookup. read(from, to)
// says that it is done with l.b[from:to].
func (l *rowLayout) checkCodes(n int, read func(from, to int)) error {
	for lo := 0; lo < n; lo += checkStretch {
		hi := min(lo+checkStretch, n)
		for k := range l.ids {
			f := &l.ids[k]
			if f.dict == nil {
				continue
			}
			for i := lo; i < hi; i++ {
				b := l.b[i*l.width+f.at:]
				code := int(b[0])
				if f.width == 2 {
					code = int(binary.LittleEndian.Uint16(b))
				}
				if code >= len(f.dict) {
					return fmt.Errorf("code %d of %d values", code, len(f.dict))
				}
			}
		}
		read(lo*l.width, hi*l.width)
	}
	return nil
}

// rowParts are the sections of a GDSAFF02 file of w's rows. The rows
// are written a stretch at a time (rowFill): held whole, the rows of
// 50M characters (800 MB) would sit beside the values they are made of.
func (w *Writer) rowParts() []part {
	var words [10]uint64
	f := &rowFill{w: w}
	var dicts []part
	for k := range idOrder {
		if w.ids[k] == nil {
			continue
		}
		var dict []int64
		words[k], dict = w.ids[k].coding()
		f.idWidth[k] = int(words[k] & 0xff)
		if dict != nil {
			dicts = append(dicts, part{b: disk.AsBytes(dict)})
		}
	}
	var texts [2]bool
	var longest uint32
	for k, offs := range w.offs {
		texts[k] = offs != nil
		for i := 1; i < len(offs); i++ {
			longest = max(longest, offs[i]-offs[i-1])
		}
	}
	if texts[0] || texts[1] {
		f.lenWidth = lengthWidth(longest)
	}
	f.idAt, f.textAt, f.width = layRow(f.idWidth, texts, f.lenWidth)
	words[3], words[4] = uint64(f.lenWidth), uint64(f.width)
	for k := range texts {
		words[5+k] = uint64(w.text[k].n)
	}
	hdr := []byte(magicRows)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(w.n))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(w.fields))
	for _, x := range words[:7] {
		hdr = binary.LittleEndian.AppendUint64(hdr, x)
	}
	hdr = append(hdr, make([]byte, rowsAt-len(hdr))...)
	parts := append([]part{{b: hdr}, {fill: f.write}}, dicts...)
	for k := range texts {
		if texts[k] {
			parts = append(parts, part{fill: w.text[k].write})
		}
	}
	return parts
}

// rowFill writes a GDSAFF02 file's rows of w's values.
type rowFill struct {
	w               *Writer
	idAt, idWidth   [3]int
	textAt          [2]int
	lenWidth, width int
}

// rowStretch is how many rows rowFill lays out before it writes them.
const rowStretch = 1 << 12

// write writes the rows to out and returns their bytes.
func (f *rowFill) write(out io.Writer) (uint64, error) {
	w := f.w
	// Reused from stretch to stretch: every row's fields are written
	// again, and the bytes between them stay zero.
	buf := make([]byte, min(w.n, rowStretch)*f.width)
	for lo := 0; lo < w.n; lo += rowStretch {
		hi := min(lo+rowStretch, w.n)
		rows := buf[:(hi-lo)*f.width]
		for i := lo; i < hi; i++ {
			row := rows[(i-lo)*f.width : (i-lo+1)*f.width]
			for k, b := range w.ids {
				if b != nil {
					putWidth(row[f.idAt[k]:], f.idWidth[k], b.value(i))
				}
			}
			for k, offs := range w.offs {
				if offs != nil {
					binary.LittleEndian.PutUint32(row[f.textAt[k]:], offs[i])
					putWidth(row[f.textAt[k]+4:], f.lenWidth, uint64(offs[i+1]-offs[i]))
				}
			}
		}
		if _, err := out.Write(rows); err != nil {
			return 0, err
		}
	}
	return uint64(w.n * f.width), nil
}

// putWidth writes v's low width bytes at b.
func putWidth(b []byte, width int, v uint64) {
	switch width {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(b, v)
	}
}
