package recstore

import (
	"fmt"
	"io"
	"os"

	"gds/snapshots/disk"
)

// A store written whole keeps its records' keys, block positions and
// hashes on disk until Close writes its index: each array goes to an
// unlinked temporary file as the records are added (20 bytes a record),
// and the index is streamed from those files. Held in memory, a store of
// 50M characters would keep 1 GB beside the tables its second pass runs
// with, and the index built whole as much again at Close. A delta writer
// keeps them in memory: its index delta reads them by position.

// spoolChunk is how many values a spool holds before it writes them out.
const spoolChunk = 1 << 16

// spool is one of the index's arrays, in the order the records are added.
type spool[T int64 | uint32 | uint64] struct {
	mem         []T      // the values not yet in f; all of them without f
	f           *os.File // nil: the values stay in mem
	n           int
	first, last T
	err         error
}

// newSpool is a spool kept in an unlinked temporary file in dir, or in
// memory when dir is "".
func newSpool[T int64 | uint32 | uint64](dir string) (*spool[T], error) {
	if dir == "" {
		return &spool[T]{}, nil
	}
	f, err := disk.UnlinkedTemp(dir, ".index-*")
	if err != nil {
		return nil, err
	}
	return &spool[T]{f: f, mem: make([]T, 0, spoolChunk)}, nil
}

// grow makes room for n values (a spool in memory only).
func (s *spool[T]) grow(n int) {
	if s.f == nil && n > cap(s.mem)-len(s.mem) {
		s.mem = append(make([]T, 0, len(s.mem)+n), s.mem...)
	}
}

func (s *spool[T]) add(v T) {
	if s.n == 0 {
		s.first = v
	}
	s.last = v
	s.n++
	s.mem = append(s.mem, v)
	if s.f != nil && len(s.mem) == spoolChunk {
		s.flush()
	}
}

// flush writes the values held in memory out to the file, after those
// written before (wherever a read left the file's offset).
func (s *spool[T]) flush() {
	if s.err == nil && len(s.mem) > 0 {
		b := disk.AsBytes(s.mem)
		_, s.err = s.f.WriteAt(b, int64(s.n-len(s.mem))*int64(len(b)/len(s.mem)))
	}
	s.mem = s.mem[:0]
}

// each hands the values to fn in order, a chunk at a time; a chunk is
// fn's only until it returns.
func (s *spool[T]) each(fn func([]T) error) error {
	if s.f == nil {
		return fn(s.mem)
	}
	s.flush()
	if s.err != nil {
		return s.err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	buf := make([]T, spoolChunk)
	for left := s.n; left > 0; {
		chunk := buf[:min(left, len(buf))]
		if _, err := io.ReadFull(s.f, disk.AsBytes(chunk)); err != nil {
			return fmt.Errorf("record store index spool: %w", err)
		}
		if err := fn(chunk); err != nil {
			return err
		}
		left -= len(chunk)
	}
	return nil
}

// close lets go of the file, which goes with it.
func (s *spool[T]) close() {
	if s.f != nil {
		_ = s.f.Close()
	}
}
