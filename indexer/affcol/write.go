package affcol

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"gds/snapshots/disk"
)

// Writer collects a column's rows in store order and writes the file at
// Write. IDs are kept as uint32 until one does not fit, then as int64.
type Writer struct {
	fields Fields
	n      int
	ids32  [3][]uint32
	ids64  [3][]int64
	wide   bool
	offs   [2][]uint32
	text   [2][]byte
}

// NewWriter starts a column of the given fields, with room for n rows.
func NewWriter(fields Fields, n int) *Writer {
	w := &Writer{fields: fields & allField}
	for k, f := range []Fields{Corporation, Alliance, Faction} {
		if w.fields&f != 0 {
			w.ids32[k] = make([]uint32, 0, n)
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
	for k, v := range [3]int64{r.Corporation, r.Alliance, r.Faction} {
		if w.fields&[]Fields{Corporation, Alliance, Faction}[k] != 0 {
			w.addID(k, v)
		}
	}
	for k, s := range [2]string{r.Name, r.Ticker} {
		if w.offs[k] == nil {
			continue
		}
		if uint64(len(w.text[k]))+uint64(len(s)) > math.MaxUint32 {
			return fmt.Errorf("affiliation column: over 4 GiB of text")
		}
		w.text[k] = append(w.text[k], s...)
		w.offs[k] = append(w.offs[k], uint32(len(w.text[k])))
	}
	w.n++
	return nil
}

func (w *Writer) addID(k int, v int64) {
	if !w.wide && (v < 0 || v > math.MaxUint32) {
		w.widen()
	}
	if w.wide {
		w.ids64[k] = append(w.ids64[k], v)
	} else {
		w.ids32[k] = append(w.ids32[k], uint32(v))
	}
}

// widen turns the uint32 IDs into int64s.
func (w *Writer) widen() {
	w.wide = true
	for k, ids := range w.ids32 {
		if ids == nil {
			continue
		}
		w.ids64[k] = make([]int64, len(ids), max(cap(ids), len(ids)+1))
		for i, v := range ids {
			w.ids64[k][i] = int64(v)
		}
		w.ids32[k] = nil
	}
}

// Write writes the column to path atomically.
func (w *Writer) Write(path string) error {
	return disk.ReplaceFile(path, disk.PrivateFile, func(f *os.File) error {
		cw := disk.NewChunkWriter(f, disk.HugeChunk)
		flags := uint64(w.fields)
		if w.wide {
			flags |= flagWide
		}
		hdr := []byte(magic)
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(w.n))
		hdr = binary.LittleEndian.AppendUint64(hdr, flags)
		parts := [][]byte{hdr}
		for k := range 3 {
			if w.ids64[k] != nil {
				parts = append(parts, disk.AsBytes(w.ids64[k]))
			} else if w.fields&[]Fields{Corporation, Alliance, Faction}[k] != 0 {
				parts = append(parts, disk.AsBytes(w.ids32[k]))
			}
		}
		for k := range 2 {
			if w.offs[k] != nil {
				parts = append(parts, disk.AsBytes(w.offs[k]), w.text[k])
			}
		}
		var pad [8]byte
		for _, p := range parts {
			if _, err := cw.Write(p); err != nil {
				return err
			}
			if _, err := cw.Write(pad[:disk.Pad8(uint64(len(p)))-uint64(len(p))]); err != nil {
				return err
			}
		}
		return cw.Flush()
	})
}

// Open reads the column file at path: held in memory of the process's
// own (disk.Load) when inMemory, else mapped. A file that does not parse
// is an error; so is one of another number of rows than want (its
// store's).
func Open(path string, inMemory bool, want int) (*Column, func() error, error) {
	var b []byte
	var release func() error
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
	}
	c, err := parse(b)
	if err == nil && c.n != want {
		err = fmt.Errorf("%d rows, the store has %d", c.n, want)
	}
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("affiliation column %s: %w", path, err)
	}
	return c, release, nil
}
