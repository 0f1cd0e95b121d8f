package nametable

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenTable: a table file, however damaged, is refused when opened
// with an error, or opened and then searched (contains, strict, with an
// access filter) without a crash: walks read posting lists with no checks
// of their own, trusting those Open made once.
func FuzzOpenTable(f *testing.F) {
	var entries []Entry
	words := []string{"kiri", "otsu", "azbel", "sato", "kirjuun", "x"}
	for i := range 300 {
		name := fmt.Sprintf("%s %s", words[i%len(words)], words[i*7%len(words)])
		entries = append(entries, Entry{ID: int64(1000 + i), Folded: name, Access: []int64{int64(1 + i%3)}})
	}
	path := filepath.Join(f.TempDir(), "t.tbl")
	if err := Write(path, entries, nil); err != nil {
		f.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
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
		for _, text := range texts {
			n := 0
			tbl.Contains(text, nil, &Stats{}, func(o uint32, _ Match) bool {
				_ = tbl.ID(o)
				n++
				return n < 50
			})
			tbl.Strict(text, nil, &Stats{}, func(o uint32) bool { return true })
			for c := int64(1); c <= 3; c++ {
				if flt, ok := tbl.AccessFilter(c); ok {
					tbl.Contains(text, &flt, &Stats{}, func(uint32, Match) bool { return true })
				}
			}
		}
	})
}
