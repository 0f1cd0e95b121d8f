package disk

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// Load holds a file's content in read-only anonymous memory that may be
// huge pages, one copy for every load of the same file (hard links too)
// while any is held.
func TestLoad(t *testing.T) {
	if !hugePagesOn() {
		t.Skip("transparent huge pages are off here: Load maps the file")
	}
	dir := t.TempDir()
	content := make([]byte, 5<<20+123) // spans huge pages, not a multiple of one
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range content {
		content[i] = byte(rng.Uint32())
	}
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, content, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Link(a, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, content, 0o600); err != nil {
		t.Fatal(err)
	}

	before := HeldBytes()
	first := mustLoad(t, a)
	if !bytes.Equal(first.Bytes, content) {
		t.Fatal("loaded content differs from the file")
	}
	start := uintptr(unsafe.Pointer(&first.Bytes[0]))
	if start%HugeChunk != 0 {
		t.Fatalf("content at %#x, not at a huge page boundary", start)
	}
	vma := mappingOf(t, start)
	if status, _ := os.ReadFile("/proc/self/status"); strings.Contains(string(status), "THP_enabled:\t0") {
		vma.eligible = "1" // huge pages are off for this process (prctl): the advice cannot show
	}
	if !strings.Contains(vma.perms, "r--") || vma.eligible != "1" {
		t.Fatalf("the content's mapping: %+v, want read-only and eligible for huge pages", vma)
	}
	if vma.size < len(content) {
		t.Fatalf("mapping of %d bytes for %d", vma.size, len(content))
	}

	again, viaLink, separate := mustLoad(t, a), mustLoad(t, link), mustLoad(t, other)
	if &again.Bytes[0] != &first.Bytes[0] || &viaLink.Bytes[0] != &first.Bytes[0] {
		t.Fatal("loads of one file (by its name and by a hard link) do not share one copy")
	}
	if &separate.Bytes[0] == &first.Bytes[0] || !bytes.Equal(separate.Bytes, content) {
		t.Fatal("a different file with the same content shares the copy")
	}
	page := os.Getpagesize()
	if got, want := HeldBytes()-before, 2*int64((len(content)+page-1)/page*page); got != want {
		t.Fatalf("HeldBytes grew by %d for two copies of %d bytes (four loads), want %d", got, len(content), want)
	}

	// Every load but one let go: the copy stays, whole.
	for _, l := range []*Loaded{first, again, separate} {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Close(); err != nil { // a second Close changes nothing
		t.Fatal(err)
	}
	if !bytes.Equal(viaLink.Bytes, content) {
		t.Fatal("content changed while a load still holds it")
	}
	if err := viaLink.Close(); err != nil {
		t.Fatal(err)
	}
	loads.Lock()
	held := len(loads.m)
	loads.Unlock()
	if held != 0 || HeldBytes() != before {
		t.Fatalf("%d copies, %d bytes still held after every load closed (%d before)", held, HeldBytes(), before)
	}

	// The file rewritten under the same name is a new file: a new copy.
	changed := append([]byte("new "), content...)
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := mustLoad(t, a)
	defer fresh.Close()
	if !bytes.Equal(fresh.Bytes, changed) {
		t.Fatal("a rewritten file loads its old content")
	}
}

func TestLoadEmptyAndMissing(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := mustLoad(t, empty)
	if len(l.Bytes) != 0 {
		t.Fatalf("empty file loaded as %d bytes", len(l.Bytes))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("Load of a missing file: %v", err)
	}
}

func mustLoad(t *testing.T, name string) *Loaded {
	t.Helper()
	l, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// vmaInfo is what /proc/self/smaps says of one mapping.
type vmaInfo struct {
	perms, eligible string
	size            int
}

// mappingOf reads /proc/self/smaps for the mapping holding addr.
func mappingOf(t *testing.T, addr uintptr) vmaInfo {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var cur *vmaInfo
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		var perms string
		if n, _ := fmt.Sscanf(line, "%x-%x %s", &lo, &hi, &perms); n == 3 {
			if cur != nil {
				return *cur
			}
			if lo <= addr && addr < hi {
				cur = &vmaInfo{perms: perms, size: int(hi - lo)}
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "THPeligible:"); ok && cur != nil {
			cur.eligible = strings.TrimSpace(v)
		}
	}
	if cur == nil {
		t.Fatalf("no mapping holds %#x", addr)
	}
	return *cur
}

// With no memory to be had for a copy (the kernel refuses the mapping:
// an address-space limit, strict overcommit), Load maps the file instead.
func TestLoadWithoutMemoryMaps(t *testing.T) {
	if !hugePagesOn() {
		t.Skip("transparent huge pages are off here: Load maps the file")
	}
	name := filepath.Join(t.TempDir(), "big")
	content := make([]byte, 3<<20)
	content[len(content)-1] = 7
	if err := os.WriteFile(name, content, 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(m func(int, int64, unsafe.Pointer, uintptr, int, int) (unsafe.Pointer, error)) { mmapAnon = m }(mmapAnon)
	mmapAnon = func(int, int64, unsafe.Pointer, uintptr, int, int) (unsafe.Pointer, error) {
		return nil, syscall.ENOMEM
	}
	l, err := Load(name)
	if err != nil {
		t.Fatalf("Load with no memory for a copy: %v", err)
	}
	defer l.Close()
	loads.Lock()
	copies := len(loads.m)
	loads.Unlock()
	if copies != 0 || !bytes.Equal(l.Bytes, content) {
		t.Fatalf("%d copies, %d bytes: want the file mapped whole", copies, len(l.Bytes))
	}
}

// Copy holds slices in read-only anonymous memory that may be huge pages,
// each copy 8-byte aligned, until Close.
func TestCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := [][]byte{make([]byte, 3<<20+5), nil, make([]byte, 13), make([]byte, 1<<20)}
	for _, p := range parts {
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
	}
	before := HeldBytes()
	l, copies, err := Copy(parts...)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	if got, want := HeldBytes()-before, int64((len(l.Bytes)+page-1)/page*page); got != want {
		t.Fatalf("HeldBytes grew by %d for a copy of %d bytes, want %d", got, len(l.Bytes), want)
	}
	if len(copies) != len(parts) {
		t.Fatalf("%d copies of %d parts", len(copies), len(parts))
	}
	for i, c := range copies {
		if !bytes.Equal(c, parts[i]) || cap(c) != len(parts[i]) {
			t.Fatalf("part %d: copy of %d bytes (cap %d), want %d equal bytes", i, len(c), cap(c), len(parts[i]))
		}
		if len(c) > 0 && uintptr(unsafe.Pointer(&c[0]))%8 != 0 {
			t.Fatalf("part %d starts at %p, not 8-byte aligned", i, &c[0])
		}
		if len(c) > 0 && &c[0] == &parts[i][0] {
			t.Fatalf("part %d is not a copy", i)
		}
	}
	start := uintptr(unsafe.Pointer(&l.Bytes[0]))
	vma := mappingOf(t, start)
	if !strings.Contains(vma.perms, "r--") || vma.size < len(l.Bytes) {
		t.Fatalf("the copies' mapping: %+v, want read-only, at least %d bytes", vma, len(l.Bytes))
	}
	if hugePagesOn() && start%HugeChunk != 0 {
		t.Fatalf("copies at %#x, not at a huge page boundary", start)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil { // a second Close changes nothing
		t.Fatal(err)
	}
	if HeldBytes() != before {
		t.Fatalf("HeldBytes %d after Close, %d before the copy", HeldBytes(), before)
	}

	empty, none, err := Copy()
	if err != nil || len(none) != 0 || empty.Close() != nil {
		t.Fatalf("Copy of nothing: %v, %d copies", err, len(none))
	}
}
