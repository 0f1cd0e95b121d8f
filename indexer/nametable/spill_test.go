package nametable

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestPassesWriteTheSameTable writes one table with its posting lists
// built in one pass and in many (a few hundred postings a pass, a common
// trigram alone past that): the files are the same bytes, and the table
// written in passes finds what a scan of the names finds.
func TestPassesWriteTheSameTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	words := []string{"kiri", "otsu", "azbel", "sato", "kirjuun", "ωωω", "x", "ab"}
	var entries []Entry
	access := Access{}
	for i := range 5000 {
		name := fmt.Sprintf("%s %s%d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(50))
		entries = append(entries, Entry{ID: int64(7000 + i), Folded: name})
		if i%7 == 0 {
			access[int64(7000+i)] = []int64{int64(1 + i%4)}
		}
	}
	write := func(perPass uint64) []byte {
		t.Helper()
		defer func(was uint64) { postingsPerPass = was }(postingsPerPass)
		postingsPerPass = perPass
		path := filepath.Join(t.TempDir(), "t.tbl")
		if err := Write(context.Background(), path, append([]Entry(nil), entries...), access, nil); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".postings-*")); len(left) > 0 {
			t.Fatalf("temporary files left beside the table: %v", left)
		}
		return raw
	}
	one, many := write(1<<30), write(300)
	if !bytes.Equal(one, many) {
		t.Fatalf("a table written in passes differs from one written at once (%d and %d bytes)", len(many), len(one))
	}
	tbl, err := parseTable(many)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"kir", "zbel sa", "ωω", "otsu otsu1", "o k"} {
		want := 0
		for _, e := range entries {
			if bytes.Contains([]byte(e.Folded), []byte(text)) {
				want++
			}
		}
		got := 0
		tbl.Contains([]byte(text), nil, &Stats{}, 0, func(uint32, Match) bool { got++; return true })
		if got != want || want == 0 {
			t.Errorf("%q: %d names found, %d hold it", text, got, want)
		}
	}
}
