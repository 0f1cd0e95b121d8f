package indexer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"gds/indexer/valuecol"
	"gds/snapshots/disk"
)

// A kind read whole keeps its value columns on disk until its table is
// written: each column's values, with their positions, go to a file of
// their own as the records are read (12 bytes a value), and writeTable
// reads the columns back one at a time. Held in memory, a category of
// every character's columns would cost 16 bytes a value for the whole
// read and the tables' first steps, beside everything else they hold.

// spilledColumn is one column's values on disk: an unlinked temporary
// file, gone once closed.
type spilledColumn struct {
	f   *os.File
	w   *bufio.Writer
	n   int
	err error
}

// spillColumns makes c keep its columns in temporary files in dir.
func (c *tableColumns) spillColumns(dir string) error {
	for range c.cols {
		// Unlinked at once: nothing is left behind, however the build ends.
		f, err := disk.UnlinkedTemp(dir, ".column-*")
		if err != nil {
			c.closeSpill()
			return err
		}
		c.spill = append(c.spill, &spilledColumn{f: f, w: bufio.NewWriterSize(f, 256<<10)})
	}
	return nil
}

// closeSpill closes the files of the columns still on disk.
func (c *tableColumns) closeSpill() {
	for _, s := range c.spill {
		if s != nil {
			_ = s.f.Close()
		}
	}
	c.spill = nil
}

// add appends one value at position pos; the first error is kept for read.
func (s *spilledColumn) add(v int64, pos int) {
	if s.err != nil {
		return
	}
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	binary.LittleEndian.PutUint32(b[8:], uint32(pos))
	_, s.err = s.w.Write(b[:])
	s.n++
}

// read returns the column's values, each position turned into its
// ordinal (ord[pos]), and closes the file.
func (s *spilledColumn) read(ord []uint32) ([]valuecol.Entry, error) {
	defer s.f.Close()
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if s.err == nil {
		_, s.err = s.f.Seek(0, io.SeekStart)
	}
	if s.err != nil {
		return nil, s.err
	}
	es := make([]valuecol.Entry, s.n)
	r := bufio.NewReaderSize(s.f, 256<<10)
	var b [12]byte
	for i := range es {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("spilled column: %w", err)
		}
		pos := binary.LittleEndian.Uint32(b[8:])
		es[i] = valuecol.Entry{Value: int64(binary.LittleEndian.Uint64(b[:])), Ord: ord[pos]}
	}
	return es, nil
}

// specs names the columns and says how many values each holds.
func (c *tableColumns) specs() []valuecol.Spec {
	specs := make([]valuecol.Spec, len(c.cols))
	for k, col := range c.cols {
		specs[k] = valuecol.Spec{Name: col.Name, Len: len(col.Entries)}
		if c.spill != nil {
			specs[k].Len = c.spill[k].n
		}
	}
	return specs
}

// take returns column k's values with their positions turned into
// ordinals (ord[pos]) and lets go of them: c holds the column no more.
func (c *tableColumns) take(k int, ord []uint32) ([]valuecol.Entry, error) {
	if c.spill != nil {
		s := c.spill[k]
		c.spill[k] = nil
		return s.read(ord)
	}
	es := c.cols[k].Entries
	c.cols[k].Entries = nil
	for j := range es {
		es[j].Ord = ord[es[j].Ord]
	}
	return es, nil
}
