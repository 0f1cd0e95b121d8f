package disk

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Load reads a file gds reads at random all over (a name table, a record
// store's data) into anonymous memory it asks the kernel to back with
// transparent huge pages (MADV_HUGEPAGE), then makes that memory
// read-only.
//
// A mapping of the file itself is in huge pages only where the page cache
// happens to hold the file in huge folios, which depends on how it was
// written and on how fragmented memory was then: a 10M-name table written
// in 2 MiB pieces during a busy build was 299 of 691 MB huge-mapped. Huge
// pages cut a contains search's TLB misses (2026-11-25, 10M names: about
// a tenth of the server's CPU an answer).
//
// Loads of one file (one device and inode, so hard links too, as
// generations share unchanged tables) share one copy while any is held;
// the file stays open meanwhile, so its inode is not reused. Where the
// system has no transparent huge pages the file is mapped instead, as Map
// with populate does (an empty file too).
//
// The kernel may compact memory to find the huge pages: the first load
// of a 691 MB table on a machine up for a day took 1.9 s, later ones
// 0.15 s (2026-11-25).
func Load(name string) (*Loaded, error) {
	if !hugePagesOn() {
		return LoadMapped(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	id, ok := idOf(st)
	if st.Size() == 0 || !ok {
		f.Close()
		return LoadMapped(name)
	}
	loads.Lock()
	defer loads.Unlock()
	if c := loads.m[id]; c != nil {
		f.Close()
		c.refs++
		return c.handle(), nil
	}
	c, err := loadAnon(f, st.Size())
	if errors.Is(err, errNoMemory) {
		// No room for a copy (a limit on the address space, or strict
		// overcommit): the page cache serves as well, if more slowly.
		f.Close()
		return LoadMapped(name)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("loading %s: %w", name, err)
	}
	c.id = id
	if loads.m == nil {
		loads.m = map[FileID]*loadedCopy{}
	}
	loads.m[id] = c
	return c.handle(), nil
}

// errNoMemory: the anonymous memory for a copy could not be had.
var errNoMemory = errors.New("no memory for a copy")

// mmapAnon maps the memory of a copy (a test makes it fail).
var mmapAnon = unix.MmapPtr

// loads holds the copies Load made that are still held.
var loads struct {
	sync.Mutex
	m map[FileID]*loadedCopy
}

// loadedCopy is one file's content in anonymous memory.
type loadedCopy struct {
	id   FileID
	f    *os.File
	data []byte         // the content
	mem  unsafe.Pointer // the mapping: data's start, size bytes
	size uintptr
	refs int
}

func (c *loadedCopy) handle() *Loaded {
	return &Loaded{Bytes: c.data, id: c.id, hasID: true, close: c.release}
}

func (c *loadedCopy) release() error {
	loads.Lock()
	defer loads.Unlock()
	if c.refs--; c.refs > 0 {
		return nil
	}
	delete(loads.m, c.id)
	err := c.unmap()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// loadAnon reads f (size bytes, not 0) into a new anonymous mapping that
// starts at a huge page boundary (anonMemory).
func loadAnon(f *os.File, size int64) (*loadedCopy, error) {
	c, err := anonMemory(uintptr(size), func(data []byte) error {
		for off := 0; off < len(data); off += HugeChunk {
			end := min(off+HugeChunk, len(data))
			if _, err := f.ReadAt(data[off:end], int64(off)); err != nil { // io.EOF too: the file shrank
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.f = f
	return c, nil
}

// Copy holds parts in anonymous memory of the process's own, one after
// the other, each starting at a multiple of 8 bytes, read-only and in huge
// pages where the system has them; it returns the copies in order. What
// it holds stays in memory however long nothing reads it, where the
// kernel may drop a mapped file's pages (a record store's index, say)
// and a later read waits for the disk. Close lets go of them all.
func Copy(parts ...[]byte) (*Loaded, [][]byte, error) {
	var size uintptr
	for _, p := range parts {
		size += (uintptr(len(p)) + 7) &^ 7
	}
	if size == 0 {
		return &Loaded{close: func() error { return nil }}, make([][]byte, len(parts)), nil
	}
	out := make([][]byte, len(parts))
	c, err := anonMemory(size, func(data []byte) error {
		at := 0
		for i, p := range parts {
			out[i] = data[at : at+len(p) : at+len(p)]
			copy(out[i], p)
			at += (len(p) + 7) &^ 7
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return &Loaded{Bytes: c.data, close: c.unmap}, out, nil
}

// anonMemory maps size bytes (not 0) of anonymous memory that start at a
// huge page boundary, so that every whole huge page of it can be one (the
// rest, under one, is small pages), asks for huge pages, lets fill write
// them and makes them read-only.
func anonMemory(size uintptr, fill func(data []byte) error) (*loadedCopy, error) {
	page := uintptr(os.Getpagesize())
	rounded := (size + page - 1) &^ (page - 1)
	// Map a huge page more than needed and unmap what lies before the
	// first huge page boundary and after the rounded length.
	p, err := mmapAnon(-1, 0, nil, rounded+HugeChunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoMemory, err)
	}
	head := (HugeChunk - uintptr(p)%HugeChunk) % HugeChunk
	mem := unsafe.Add(p, head)
	if head > 0 {
		_ = unix.MunmapPtr(p, head)
	}
	if tail := HugeChunk - head; tail > 0 {
		_ = unix.MunmapPtr(unsafe.Add(mem, rounded), tail)
	}
	c := &loadedCopy{mem: mem, size: rounded, refs: 1}
	held.Add(int64(rounded))
	all := unsafe.Slice((*byte)(mem), rounded)
	if hugePagesOn() {
		_ = unix.Madvise(all, unix.MADV_HUGEPAGE) // a hint: small pages work too
	}
	data := all[:size:size]
	if err := fill(data); err != nil {
		c.unmap()
		return nil, err
	}
	if err := unix.Mprotect(all, unix.PROT_READ); err != nil {
		c.unmap()
		return nil, err
	}
	c.data = data
	return c, nil
}

// unmap lets go of a copy's memory.
func (c *loadedCopy) unmap() error {
	held.Add(-int64(c.size))
	return unix.MunmapPtr(c.mem, c.size)
}

// held counts the bytes of the copies Load and Copy hold.
var held atomic.Int64

// HeldBytes is the memory the process holds in copies made by Load and
// Copy (a copy shared by several loads counted once), in whole pages.
func HeldBytes() int64 { return held.Load() }

// hugePagesOn reports whether transparent huge pages may back memory
// that asks for them (the mode is "always" or "madvise").
var hugePagesOn = sync.OnceValue(func() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !bytes.Contains(mode, []byte("[never]"))
})

// Anon returns size bytes of zeroed anonymous memory outside the Go heap,
// which the collector neither scans nor counts towards its next goal, and
// the function that frees it. HeldBytes does not count it: it copies no
// file.
func Anon(size int) ([]byte, func() error, error) {
	if size <= 0 {
		return nil, func() error { return nil }, nil
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errNoMemory, err)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
