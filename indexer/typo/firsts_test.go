package typo

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gds/snapshots/disk"
)

func (n names) Len() int { return len(n) }

func (n names) Repeats(fn func(o uint32)) bool {
	seen := map[string]bool{}
	for o, name := range n {
		if seen[name] {
			fn(uint32(o))
		}
		seen[name] = true
	}
	return true
}

func (n names) Exact(text []byte, fn func(o uint32, id int64) bool) {
	for o, name := range n {
		if name == string(text) && !fn(uint32(o), int64(o)) {
			return
		}
	}
}

// An index keeping only each name's first ordinal finds what the whole
// lists find, one hit a name: the first ordinal of it the whole lists'
// hits hold, at the same distance, in the same order; with the first
// hidden, the first namesake left. The index is mapped (Open), and
// KeepFirsts releases the pages it has read every 1,024 postings: what it
// kept and what searches read again come back from the file.
func TestKeepFirstsFindsEachNameOnce(t *testing.T) {
	defer func(s int) { releaseStretch = s }(releaseStretch)
	releaseStretch = 1024
	rng := rand.New(rand.NewPCG(8, 2))
	distinct := testNames(600, 4)
	ns := make(names, 0, 3000)
	for range cap(ns) {
		ns = append(ns, distinct[rng.IntN(len(distinct))]) // most names shared by several ordinals
	}
	slices.SortStableFunc(ns, func(a, b string) int { return len([]rune(a)) - len([]rune(b)) })
	whole := writeIndex(t, ns, nil)
	kept := writeIndex(t, ns, nil)
	if err := kept.KeepFirsts(ns); err != nil {
		t.Fatal(err)
	}
	if kept.mapped == nil || len(whole.posts) < 4*releaseStretch {
		t.Fatalf("%d postings, mapped %v: KeepFirsts releases no page", len(whole.posts), kept.mapped != nil)
	}
	if len(kept.posts) >= len(whole.posts) {
		t.Fatalf("the firsts' lists hold %d ordinals, the whole %d", len(kept.posts), len(whole.posts))
	}
	hidden := map[uint32]bool{}
	for range 600 {
		hidden[uint32(rng.IntN(len(ns)))] = true
	}
	skip := func(o uint32) bool { return hidden[o] }
	found := 0
	for i := range 300 {
		text := Misspell(ns[rng.IntN(len(ns))], rng)
		if i%3 == 0 {
			text = text[:len(text)*2/3] // being typed
		}
		for _, sk := range []func(uint32) bool{nil, skip} {
			want := firstOfEachName(whole.Search([]byte(text), ns, sk, len(ns)), ns)
			got := kept.Search([]byte(text), ns, sk, len(ns))
			if !slices.Equal(got, want) {
				t.Fatalf("%q (hidden %v): got %v\nwant %v", text, sk != nil, hitNames(got, ns), hitNames(want, ns))
			}
			found += len(got)
		}
	}
	if found == 0 {
		t.Fatal("no text found anything: the comparison proves nothing")
	}
	if err := writeIndex(t, ns, nil).KeepFirsts(ns[1:]); err == nil {
		t.Error("kept to a table of another size")
	}
}

// filedNames is a table of names with the FileID of a file, as a table
// opened from one has.
type filedNames struct {
	names
	id disk.FileID
}

func (f filedNames) FileID() (disk.FileID, bool) { return f.id, true }

// Indexes open on one file (a hard link too) over one table file share
// one copy of the lists of firsts: the second takes the first's without
// walking its lists, answers as the first does, keeps them when the first
// closes, and the copy goes with the last. A table of another file gets
// lists of its own.
func TestKeptFirstsAreShared(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	distinct := testNames(200, 4)
	ns := make(names, 0, 1000)
	for range cap(ns) {
		ns = append(ns, distinct[rng.IntN(len(distinct))])
	}
	slices.SortStableFunc(ns, func(a, b string) int { return len([]rune(a)) - len([]rune(b)) })
	dir := t.TempDir()
	path, link, other := filepath.Join(dir, "base.typ"), filepath.Join(dir, "next.typ"), filepath.Join(dir, "other")
	if err := Write(path, ns, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("another table"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileID := func(p string) disk.FileID {
		b, id, ok, err := disk.MapID(p, false)
		if err != nil || !ok {
			t.Fatalf("%s: no FileID (%v)", p, err)
		}
		disk.Unmap(b)
		return id
	}
	table, otherTable := filedNames{ns, fileID(path)}, filedNames{ns, fileID(other)}
	open := func(p string, tb Namesakes) *Index {
		t.Helper()
		x, err := Open(p, len(ns))
		if err != nil {
			t.Fatal(err)
		}
		if err := x.KeepFirsts(tb); err != nil {
			t.Fatal(err)
		}
		return x
	}
	first, second, apart := open(path, table), open(link, table), open(path, otherTable)
	if &first.posts[0] != &second.posts[0] || &first.posts[0] == &apart.posts[0] {
		t.Fatal("the lists of one pair of files are not shared, or another table's are")
	}
	texts := make([]string, 0, 100)
	for range cap(texts) {
		texts = append(texts, Misspell(ns[rng.IntN(len(ns))], rng))
	}
	want := make([][]Hit, len(texts))
	for i, text := range texts {
		want[i] = first.Search([]byte(text), ns, nil, 10)
	}
	first.Close()
	found := 0
	for i, text := range texts {
		got := second.Search([]byte(text), ns, nil, 10)
		if !slices.Equal(got, want[i]) {
			t.Fatalf("%q after the first closed: %v, want %v", text, got, want[i])
		}
		found += len(got)
	}
	if found == 0 {
		t.Fatal("no text found anything: the comparison proves nothing")
	}
	second.Close()
	apart.Close()
	if left := keptFirsts.Len(); left != 0 {
		t.Errorf("%d copies of lists left after every index closed", left)
	}
}

// firstOfEachName keeps the first hit of each name.
func firstOfEachName(hits []Hit, ns names) []Hit {
	seen := map[string]bool{}
	var out []Hit
	for _, h := range hits {
		if !seen[ns[h.O]] {
			seen[ns[h.O]] = true
			out = append(out, h)
		}
	}
	return out
}
