package typo

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gds/snapshots/synth"
)

// names is a table's folded names in ordinal order.
type names []string

func (n names) Name(o uint32) []byte { return []byte(n[o]) }

// testNames makes names as players write them: two words, one, three,
// with apostrophes and hyphens, digits in handles; rank-ordered as a
// table orders them (length, then position).
func testNames(n int, seed uint64) names {
	rng := rand.New(rand.NewPCG(seed, 1))
	first := []string{"ann", "boris", "catherine", "dmitri", "elena", "fjord", "gustav", "hilde", "ivo", "jasper", "kaori", "lumi"}
	syl := []string{"ka", "ro", "vel", "tan", "mir", "os", "eth", "ul", "bra", "dun", "isk", "ar"}
	word := func() string { return synth.Syllables(rng, 2+rng.IntN(3), syl...) }
	out := make(names, 0, n)
	for len(out) < n {
		f := first[rng.IntN(len(first))]
		switch rng.IntN(6) {
		case 0:
			out = append(out, word()+fmt.Sprint(rng.IntN(100)))
		case 1:
			out = append(out, f+" o'"+word())
		case 2:
			out = append(out, f+" "+word()+"-"+word())
		case 3:
			out = append(out, f+" "+first[rng.IntN(len(first))]+" "+word())
		default:
			out = append(out, f+" "+word())
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len([]rune(a)) - len([]rune(b)) })
	return out
}

func writeIndex(t testing.TB, ns names, tickers []string) *Index {
	t.Helper()
	path := filepath.Join(t.TempDir(), "base.typ")
	if err := Write(path, ns, tickers); err != nil {
		t.Fatal(err)
	}
	x, err := Open(path, len(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// oneEdits returns every text one edit from s: each rune deleted, each
// pair of neighbours swapped, each rune replaced by and each gap given a
// letter of alphabet or a space.
func oneEdits(s, alphabet string) []string {
	rs := []rune(s)
	var out []string
	add := func(v []rune) {
		if t := string(v); t != s {
			out = append(out, t)
		}
	}
	for i := range rs {
		add(slices.Concat(rs[:i], rs[i+1:]))
		if i+1 < len(rs) {
			v := slices.Clone(rs)
			v[i], v[i+1] = v[i+1], v[i]
			add(v)
		}
		for _, c := range alphabet {
			v := slices.Clone(rs)
			v[i] = c
			add(v)
		}
	}
	for i := 0; i <= len(rs); i++ {
		for _, c := range alphabet {
			add(slices.Concat(rs[:i], []rune{c}, rs[i:]))
		}
	}
	return out
}

func found(hits []Hit, o uint32) bool {
	return slices.ContainsFunc(hits, func(h Hit) bool { return h.O == o })
}

// Every one-edit variant of sampled names of 5 runes or more finds the
// name in the top ten, the name ranked by its whole distance: one.
func TestEveryOneEditFindsTheName(t *testing.T) {
	ns := testNames(5000, 7)
	x := writeIndex(t, ns, nil)
	rng := rand.New(rand.NewPCG(3, 3))
	checked := 0
	for checked < 12 {
		o := uint32(rng.IntN(len(ns)))
		if len([]rune(ns[o])) < 5 {
			continue
		}
		checked++
		for _, text := range oneEdits(ns[o], "abcdefghijklmnopqrstuvwxyz0 '") {
			hits := x.Search([]byte(text), ns, nil, 10)
			if !found(hits, o) && !allCloser(hits, ns, o) {
				t.Fatalf("%q (a typo of %q) found %v", text, ns[o], hitNames(hits, ns))
			}
		}
	}
}

// allCloser reports whether every hit is a name at most as far from the
// text as the name o is (ten names tied before it: a fair top ten).
func allCloser(hits []Hit, ns names, o uint32) bool {
	return len(hits) == 10 && hits[9].Dist <= 1 && hits[9].O < o
}

func hitNames(hits []Hit, ns names) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s(%d)", ns[h.O], h.Dist))
	}
	return out
}

// Two edits are tolerated in a word of nine runes or more, none below
// five; the ranking puts the closest name first.
func TestBudgets(t *testing.T) {
	ns := names{"kaori", "tritanium", "pyerite", "catherine velkaro", "catherine velkaros"}
	x := writeIndex(t, ns, nil)
	for _, c := range []struct {
		text string
		want int // ordinal first, -1 for nothing
	}{
		{"tirtanuim", 1}, // two transpositions, 9 runes
		{"tritanuim", 1},
		{"pyeriet", 2},
		{"pyrreitt", -1}, // three edits
		{"kaoro", 0},
		{"kaor", -1}, // a prefix of nothing being typed? "kaor" begins kaori
		{"katherine velkaro", 3},
		{"catherinevelkaros", 4},
		{"catherine velkarosx", 4},
	} {
		hits := x.Search([]byte(c.text), ns, nil, 10)
		if c.text == "kaor" {
			if len(hits) == 0 || hits[0].O != 0 {
				t.Errorf("%q: a word being typed begins a name: %v", c.text, hitNames(hits, ns))
			}
			continue
		}
		switch {
		case c.want < 0 && len(hits) > 0:
			t.Errorf("%q: want nothing, got %v", c.text, hitNames(hits, ns))
		case c.want >= 0 && (len(hits) == 0 || hits[0].O != uint32(c.want)):
			t.Errorf("%q: want %q first, got %v", c.text, ns[c.want], hitNames(hits, ns))
		}
	}
	// Not typing (a space after the text): a word is whole.
	if hits := x.Search([]byte("kaor "), ns, nil, 10); len(hits) != 0 {
		t.Errorf("a finished short word matched %v", hitNames(hits, ns))
	}
	// A hidden ordinal is not returned.
	if hits := x.Search([]byte("tritanuim"), ns, func(o uint32) bool { return o == 1 }, 10); found(hits, 1) {
		t.Error("a skipped ordinal was returned")
	}
}

func TestTickers(t *testing.T) {
	ns := names{"a corp", "b corp", "c corp"}
	x := writeIndex(t, ns, []string{"-a-", "", "-a-"})
	var got []uint32
	x.Tickers([]byte("-a-"), func(o uint32) bool { got = append(got, o); return true })
	if !slices.Equal(got, []uint32{0, 2}) {
		t.Fatalf("ticker -a-: %v", got)
	}
	x.Tickers([]byte("-b-"), func(o uint32) bool { t.Fatal("an unknown ticker matched"); return false })
	if m := x.TickerOf(); m[0] != "-a-" || m[2] != "-a-" || len(m) != 2 {
		t.Fatalf("TickerOf: %v", m)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		max  int
		want int
	}{
		{"abc", "abc", 2, 0},
		{"abc", "acb", 2, 1},
		{"abc", "ab", 2, 1},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3},
		{"", "abc", 5, 3},
		{"ж", "же", 1, 1},
	} {
		if got := Distance([]rune(c.a), []rune(c.b), c.max); got != c.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", c.a, c.b, c.max, got, c.want)
		}
	}
}

func TestMisspellSetIsDeterministic(t *testing.T) {
	var in []Named
	for i, n := range testNames(500, 1) {
		in = append(in, Named{ID: int64(i), Name: n})
	}
	a, b := MisspellSet(in, 100, 8, 42), MisspellSet(in, 100, 8, 42)
	if len(a) != 100 || !slices.Equal(a, b) {
		t.Fatalf("sets differ or are short: %d, %d", len(a), len(b))
	}
	for _, m := range a {
		if d := Distance([]rune(m.Name), []rune(m.Text), 2); d != 1 || len([]rune(m.Name)) < 8 {
			t.Fatalf("%q → %q is %d edits", m.Name, m.Text, d)
		}
	}
}

// A file that is not what Write wrote is refused at Open, never read
// out of bounds.
func TestOpenRefusesDamage(t *testing.T) {
	ns := testNames(200, 2)
	path := filepath.Join(t.TempDir(), "x.typ")
	if err := Write(path, ns, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, len(ns)+1); err == nil {
		t.Fatal("opened for the wrong number of names")
	}
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 0xff
	if x, err := Parse(aligned(b), len(ns)); err == nil {
		x.Search([]byte("ann kararo"), ns, nil, 10) // may find less, never crash
	}
}

func aligned(b []byte) []byte {
	buf := make([]uint64, (len(b)+7)/8)
	out := asBytes(buf)[:len(b)]
	copy(out, b)
	return out
}

// FuzzParse: any bytes given as an index are refused or read safely; a
// search over what was accepted stays in bounds.
func FuzzParse(f *testing.F) {
	ns := testNames(50, 5)
	path := filepath.Join(f.TempDir(), "x.typ")
	if err := Write(path, ns, make([]string, len(ns))); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	f.Add(good, "ann kararo")
	f.Add(good[:len(good)/2], "x")
	f.Add([]byte(magic), "")
	f.Fuzz(func(t *testing.T, b []byte, text string) {
		x, err := Parse(aligned(b), len(ns))
		if err != nil {
			return
		}
		x.Search([]byte(text), ns, nil, 10)
		x.Tickers([]byte(text), func(uint32) bool { return true })
	})
}

// FuzzSearch: any text (folded or not, valid UTF-8 or not) searches
// without a panic, and every hit is a name of the table, ranked.
func FuzzSearch(f *testing.F) {
	ns := testNames(2000, 9)
	x := writeIndex(f, ns, nil)
	for _, s := range []string{"ann kararo", "catherin", "", " ", "\xff\xfe", "a b c d e f", "o'", "x-y-z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		hits := x.Search([]byte(text), ns, nil, 10)
		for i, h := range hits {
			if int(h.O) >= len(ns) || (i > 0 && (h.Dist < hits[i-1].Dist || h.Dist == hits[i-1].Dist && h.O <= hits[i-1].O)) {
				t.Fatalf("%q: hits out of order or range: %v", text, hits)
			}
		}
	})
}

// Distance, computing only the cells near the diagonal, agrees with the
// whole table's distance, capped at max+1, over random pairs of words.
func TestDistanceBandMatchesWholeTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	word := func() []rune {
		rs := make([]rune, rng.IntN(14))
		for i := range rs {
			rs[i] = rune("abcé "[rng.IntN(5)])
		}
		return rs
	}
	for range 20000 {
		a, b := word(), word()
		if rng.IntN(2) == 0 { // near pairs too
			b = []rune(Misspell(string(a)+"x", rng))
		}
		for max := range 4 {
			if got, want := Distance(a, b, max), min(wholeDistance(a, b), max+1); got != want {
				t.Fatalf("Distance(%q, %q, %d) = %d, want %d", string(a), string(b), max, got, want)
			}
		}
	}
}

// wholeDistance is the optimal string alignment distance over the whole
// table.
func wholeDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
