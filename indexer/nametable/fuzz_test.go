package nametable

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// FuzzOpenTable: a table file, however damaged, is refused when opened
// with an error, or opened and then searched (contains, strict, with an
// access filter) without a crash: walks read posting lists with no checks
// of their own, trusting those Open made once.
func FuzzOpenTable(f *testing.F) {
	var entries []Entry
	access := Access{}
	words := []string{"kiri", "otsu", "azbel", "sato", "kirjuun", "x"}
	for i := range 300 {
		name := fmt.Sprintf("%s %s", words[i%len(words)], words[i*7%len(words)])
		if i%50 == 7 {
			name = "ωωωω " + words[i%len(words)] // overflows the cells of its band
		}
		entries = append(entries, Entry{ID: int64(1000 + i), Folded: name})
		access[int64(1000+i)] = []int64{int64(1 + i%3)}
	}
	path := filepath.Join(f.TempDir(), "t.tbl")
	raw := writtenTable(f, entries, access)
	var err error
	if tbl, err := parseTable(append([]byte(nil), raw...)); err != nil {
		f.Fatalf("the table as written: %v", err)
	} else if len(tbl.cl.overOrd) == 0 {
		f.Fatal("no name overflows its cell: the seed does not reach that path")
	}
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	// and as tables before GDSTBL06 hold IDs, names and lists
	for _, layout := range []string{tableMagicV5, tableMagicV4, tableMagicV3, tableMagicV2} {
		writeLayout = layout
		err = Write(context.Background(), path, entries, access, nil)
		writeLayout = ""
		if err != nil {
			f.Fatal(err)
		}
		if old, err := os.ReadFile(path); err != nil || string(old[:8]) != layout {
			f.Fatalf("%q, %v", old[:8], err)
		} else {
			f.Add(old)
		}
	}
	for _, at := range []int{len(raw) - 1, len(raw) - 40, len(raw) - 400, len(raw) / 2, 200} {
		bad := append([]byte(nil), raw...)
		bad[at] ^= 0xff
		f.Add(bad)
	}
	texts := [][]byte{[]byte("kiri"), []byte("ri k"), []byte("sato x"), []byte("zzz"), []byte("x x")}
	f.Fuzz(func(t *testing.T, data []byte) {
		tbl, err := parseTable(append([]byte(nil), data...))
		if err != nil {
			return
		}
		for o := range uint32(tbl.Len()) {
			_, _ = tbl.ID(o), tbl.Name(o)
		}
		// whole names, most shared: warmed as a local warms them, then
		// looked up by their namesakes
		var whole [][]byte
		for o := range uint32(min(tbl.Len(), 64)) {
			whole = append(whole, tbl.Name(o))
		}
		_ = tbl.Warm(whole)
		for _, name := range whole {
			tbl.Exact(name, func(uint32, int64) bool { return true })
		}
		for _, text := range texts {
			n := 0
			tbl.Contains(text, nil, &Stats{}, 0, func(o uint32, _ Match) bool {
				_ = tbl.ID(o)
				n++
				return n < 50
			})
			// with a limit: contains matches held back (see walk.contains)
			for _, limit := range []int{1, 20} {
				n = 0
				tbl.Contains(text, nil, &Stats{}, limit, func(o uint32, _ Match) bool {
					_ = tbl.ID(o)
					if n++; n > limit {
						t.Fatalf("%q: more than %d matches", text, limit)
					}
					return true
				})
			}
			tbl.Strict(text, nil, &Stats{}, func(uint32, int64) bool { return true })
			for c := int64(1); c <= 3; c++ {
				if flt, ok := tbl.AccessFilter(c); ok {
					tbl.Contains(text, &flt, &Stats{}, 0, func(uint32, Match) bool { return true })
				}
			}
		}
	})
}

// A table whose posting list is damaged is refused when opened, with an
// error naming the list, never read by a walk.
func TestOpenRefusesDamagedList(t *testing.T) {
	var entries []Entry
	for i := range 100 {
		// Every other name: an array container, not a run.
		entries = append(entries, Entry{ID: int64(1 + i), Folded: fmt.Sprintf("%s %d", []string{"kiri", "otsu"}[i%2], i)})
	}
	raw := writtenTable(t, entries, nil)
	tbl, err := parseTable(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Where "kir"'s list is in the file, and its one container's key.
	list := tbl.gramBytes(gram3([]byte("kir")))
	var l rlist
	if !l.view(list) || l.n != 1 || l.container(0).kind != kindArray {
		t.Fatalf("kir's list: %d containers, not one array", l.n)
	}
	at := int(uintptr(unsafe.Pointer(&list[0])) - uintptr(unsafe.Pointer(&raw[0])))
	for _, c := range []struct {
		name string
		pos  int // byte of the list to change
		val  byte
		want string
	}{
		{"key past the table", l.desc + 1, 0x7f, `trigram list of "kir": container 0 holds ordinals past the table's 100 names`},
		{"value past the table", l.offset(0) + 2*l.cardAt(0) - 1, 0x7f, `trigram list of "kir": container 0: ordinal out of range`},
		{"cookie", 0, 0, `trigram list of "kir": unknown cookie`},
	} {
		bad := append([]byte(nil), raw...)
		bad[at+c.pos] = c.val
		p := filepath.Join(t.TempDir(), "bad.tbl")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Open said %v, want %q", c.name, err, c.want)
		}
	}
}

// A table whose cells are damaged is refused when opened, with an error
// saying what is wrong, never read out of bounds by a lookup.
func TestOpenRefusesDamagedCells(t *testing.T) {
	var entries []Entry
	for i := range 100 {
		name := fmt.Sprintf("kiri %03d", i) // eight runes, eight bytes
		if i == 50 {
			name = "ωωωω ωωω" // eight runes in fifteen bytes: overflows
		}
		entries = append(entries, Entry{ID: int64(1 + i), Folded: name})
	}
	raw := writtenTable(t, entries, nil)
	tbl, err := parseTable(append([]byte(nil), raw...))
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.cl.bands) != 1 || tbl.cl.bands[0].size != cellHead+8 || len(tbl.cl.overOrd) != 1 {
		t.Fatalf("bands %+v, overflow %v: want one band of 13-byte cells and one name overflowing", tbl.cl.bands, tbl.cl.overOrd)
	}
	over := tbl.cl.overOrd[0]
	other := (over + 1) % 100
	section := func(i int) int { // where section i starts in the file
		return int(binary.LittleEndian.Uint64(raw[len(tableMagic)+8+16*i:]))
	}
	cells, bands := section(secCells), section(secBands)
	for _, c := range []struct {
		name string
		pos  int
		val  byte
		want string
	}{
		{"a name longer than its cell", cells + int(other)*(cellHead+8) + 4, 9, fmt.Sprintf("name %d out of range", other)},
		{"an overflow the index lacks", cells + int(other)*(cellHead+8) + 4, overflowLen, fmt.Sprintf("name %d overflows its cell but is not in the overflow index", other)},
		{"an overflow the cell denies", cells + int(over)*(cellHead+8) + 4, 3, "overflow index names a name its cell holds"},
		{"a band past the table", bands + 8, 100, "band 0 damaged"},
		{"cells of another size", bands + 8 + 4, cellHead + 9, "cells disagree with their bands"},
		{"cells smaller than their head", bands + 8 + 4, cellHead - 1, "band 0 damaged"},
	} {
		bad := append([]byte(nil), raw...)
		bad[c.pos] = c.val
		if _, err := parseTable(bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// writtenTable writes entries and their access lists as a table and
// returns the file's bytes.
func writtenTable(tb testing.TB, entries []Entry, access Access) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "t.tbl")
	if err := Write(context.Background(), path, entries, access, nil); err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}
