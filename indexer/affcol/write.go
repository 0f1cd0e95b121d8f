package affcol

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"gds/snapshots/disk"
)

// Writer collects a column's rows in store order and writes the file at
// Write, a GDSAFF02 file.
type Writer struct {
	fields  Fields
	n       int
	ids     [3]*idBuilder
	offs    [2][]uint32
	text    [2]textBuf
	columns bool // write GDSAFF01's columns instead (the reader's tests)
}

// NewWriter starts a column of the given fields, with room for n rows.
func NewWriter(fields Fields, n int) *Writer {
	w := &Writer{fields: fields & allField}
	for k, f := range idOrder {
		if w.fields&f != 0 {
			w.ids[k] = newIDBuilder(n)
		}
	}
	for k, f := range []Fields{Name, Ticker} {
		if w.fields&f != 0 {
			w.offs[k] = append(make([]uint32, 0, n+1), 0)
		}
	}
	return w
}

// Len is the number of rows added.
func (w *Writer) Len() int { return w.n }

// Add appends the next row (its fields outside the column's ignored).
func (w *Writer) Add(r Row) error {
	w.addIDs(r.Corporation, r.Alliance, r.Faction)
	return addText(w, r.Name, r.Ticker)
}

// Keep appends row i of c, a column of the same fields (an earlier
// generation's, for a record carried unchanged), copying its text without
// a string per row.
func (w *Writer) Keep(c *Column, i int) error {
	w.addIDs(c.IDs(i))
	name, ticker, err := c.Text(i)
	if err != nil {
		return err
	}
	return addText(w, name, ticker)
}

func (w *Writer) addIDs(corporation, alliance, faction int64) {
	for k, v := range [3]int64{corporation, alliance, faction} {
		if w.ids[k] != nil {
			w.ids[k].add(v)
		}
	}
}

// addText appends a row's name and ticker and counts the row.
func addText[T string | []byte](w *Writer, name, ticker T) error {
	for k, s := range [2]T{name, ticker} {
		if w.offs[k] == nil {
			continue
		}
		if uint64(w.text[k].n)+uint64(len(s)) > math.MaxUint32 {
			return fmt.Errorf("affiliation column: over 4 GiB of text")
		}
		appendText(&w.text[k], s)
		w.offs[k] = append(w.offs[k], uint32(w.text[k].n))
	}
	w.n++
	return nil
}

// textBuf is a column's text in pieces of at most textPiece bytes: grown
// as one slice by doubling, the names of 50M characters would at times
// take three times their size (the old slice, the new one and its room).
type textBuf struct {
	pieces [][]byte
	n      int
}

// textPiece is the largest piece of a textBuf; the first pieces are
// smaller, each as large as the text before it.
const textPiece = 1 << 20

func appendText[T string | []byte](t *textBuf, s T) {
	for len(s) > 0 {
		if len(t.pieces) == 0 || len(t.pieces[len(t.pieces)-1]) == cap(t.pieces[len(t.pieces)-1]) {
			t.pieces = append(t.pieces, make([]byte, 0, min(textPiece, max(256, t.n))))
		}
		last := &t.pieces[len(t.pieces)-1]
		k := min(len(s), cap(*last)-len(*last))
		*last = append(*last, s[:k]...)
		s = s[k:]
		t.n += k
	}
}

// bytes is the text in one slice.
func (t *textBuf) bytes() []byte {
	b := make([]byte, 0, t.n)
	for _, p := range t.pieces {
		b = append(b, p...)
	}
	return b
}

// write writes the text to out and returns its bytes.
func (t *textBuf) write(out io.Writer) (uint64, error) {
	for _, p := range t.pieces {
		if _, err := out.Write(p); err != nil {
			return 0, err
		}
	}
	return uint64(t.n), nil
}

// Write writes the column to path atomically.
func (w *Writer) Write(path string) error {
	var parts []part
	if w.columns {
		for _, b := range w.columnParts() {
			parts = append(parts, part{b: b})
		}
	} else {
		parts = w.rowParts()
	}
	return disk.ReplaceFile(path, disk.PrivateFile, func(f *os.File) error {
		cw := disk.NewChunkWriter(f, disk.HugeChunk)
		var pad [8]byte
		for _, p := range parts {
			size := uint64(len(p.b))
			var err error
			if p.fill != nil {
				size, err = p.fill(cw)
			} else {
				_, err = cw.Write(p.b)
			}
			if err != nil {
				return err
			}
			if _, err := cw.Write(pad[:disk.Pad8(size)-size]); err != nil {
				return err
			}
		}
		return cw.Flush()
	})
}

// part is a section of a column file: its bytes, or what writes them
// and returns how many it wrote.
type part struct {
	b    []byte
	fill func(io.Writer) (uint64, error)
}

// columnParts are the sections of a GDSAFF01 file of w's rows.
func (w *Writer) columnParts() [][]byte {
	hdr := []byte(magic)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(w.n))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(w.fields))
	var parts [][]byte
	for k := range idOrder {
		var word uint64
		if w.ids[k] != nil {
			var sections [][]byte
			word, sections = w.ids[k].encode(w.n)
			parts = append(parts, sections...)
		}
		hdr = binary.LittleEndian.AppendUint64(hdr, word)
	}
	for k := range 2 {
		if w.offs[k] != nil {
			parts = append(parts, disk.AsBytes(w.offs[k]), w.text[k].bytes())
		}
	}
	return append([][]byte{hdr}, parts...)
}

// Open reads the column file at path: held in memory of the process's
// own (disk.Load) when inMemory, else mapped, the pages its check read
// let go of as it goes. A file that does not parse
// is an error; so is one of another number of rows than want (its
// store's).
func Open(path string, inMemory bool, want int) (*Column, func() error, error) {
	var b []byte
	var release func() error
	read := func(from, to int) {} // a held copy keeps its pages
	if inMemory {
		l, err := disk.Load(path)
		if err != nil {
			return nil, nil, err
		}
		b, release = l.Bytes, l.Close
	} else {
		m, err := disk.Map(path, false)
		if err != nil {
			return nil, nil, err
		}
		b, release = m, func() error { return disk.Unmap(m) }
		read = func(from, to int) { disk.ReleasePages(m, from, to) }
	}
	c, err := parse(b, read)
	if err == nil && c.n != want {
		err = fmt.Errorf("%d rows, the store has %d", c.n, want)
	}
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("affiliation column %s: %w", path, err)
	}
	return c, release, nil
}
