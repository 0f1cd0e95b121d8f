package typo

import (
	"math/rand/v2"
	"slices"
	"testing"
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
