package analyst

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"

	"gds/indexer/typo"
	"gds/snapshots"
)

// The queries the name tables answer, and those left to bleve.
func TestNameOnly(t *testing.T) {
	// tables says whether the name tables answer req, with value columns
	// or without.
	tables := func(req Request, columns bool) bool {
		t.Helper()
		p, err := prepare(req, false)
		if err != nil {
			t.Fatalf("%q: %v", req.Query, err)
		}
		_, ok := nameOnly(p, columns)
		return ok
	}
	character := func(q string) Request { return Request{Query: q, Category: snapshots.CategoryCharacter} }
	for q, want := range map[string]bool{
		"name:kari*":                    true,
		"name:*ari*":                    true,
		"+name:kari* -name:*x*":         true,
		"name:a* name:b*":               true,
		"-name:a*":                      true,
		"*":                             true,
		"name:jita":                     false, // a term: bleve answers it at once
		"name:/kar.*/":                  false,
		"words:kari*":                   false,
		"name_de:kari*":                 false,
		"+name:kari* +corporation_id:1": false,
		"name:kari* words:navy":         false,
	} {
		if got := tables(character(q), true); got != want {
			t.Errorf("%q: name tables %v, want %v", q, got, want)
		}
	}
	// Ranges of numeric and date fields, when the generation has value
	// columns; never of keywords, nor ranges bleve would refuse.
	for q, want := range map[string]bool{
		`birthday:>="2008-01-01T00:00:00Z"`:        true,
		`+birthday:<"2010-01-01" +name:kari*`:      true,
		`-birthday:>"2010-01-01T02:00:00+02:00"`:   true,
		`birthday:<"1600-01-01"`:                   false, // before bleve's first instant: its error
		"corporation_id:>98000000":                 false, // a keyword
		"+birthday:>2010 +corporation_id:98000001": false,
		"alliance_id:>1 birthday:<=\"2011-01-01\"": false,
	} {
		if got := tables(character(q), true); got != want {
			t.Errorf("%q: tables %v, want %v", q, got, want)
		}
		if tables(character(q), false) {
			t.Errorf("%q: answered by the tables without value columns", q)
		}
	}
	if tables(Request{Query: "name:kari*", Facets: []string{"corporation_id"}, Category: snapshots.CategoryCharacter}, true) {
		t.Error("a query with facets went to the name tables")
	}
	if tables(Request{Query: "name:kari*", Sort: []string{"id"}}, true) {
		t.Error("a sorted query went to the name tables")
	}
	if _, err := bleve.NewQueryStringQuery("name:kari*").Parse(); err != nil {
		t.Fatal(err)
	}
}

// FuzzGlob: a name matches a pattern exactly when bleve's regexp
// translation of the pattern matches the whole name.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"kari*", "kari"}, {"*ari*", "kari"}, {"k?ri", "kéri"}, {"*.*", "a.b"},
		{"a*b*c", "aXbYbc"}, {"?", "ß"}, {"*", ""}, {"a\\b", "a\\b"}, {"(*)", "(x)"}, {"*a", "a\nba"}, {"?", "\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		re, err := regexp.Compile("^(?:" + wildcardRegexp(pat) + ")$")
		if err != nil {
			t.Skip() // bleve would refuse it too
		}
		if !utf8.ValidString(pat) {
			t.Skip()
		}
		g := compileGlob(pat)
		if got, want := g.match([]byte(name)), re.MatchString(name); got != want {
			t.Errorf("pattern %q, name %q: glob %v, regexp %v", pat, name, got, want)
		}
	})
}

// FuzzEditMatcher: one matcher, its rows reused over words of any length
// and script, agrees with the plain distance for fuzziness 0 to 2.
func FuzzEditMatcher(f *testing.F) {
	for _, s := range []string{"karim\x00kairm", "rri\x00rir", "ß\x00ss", "navy\x00navy", "\x00ab", "İlk\x00ilk", "abcdef\x00a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		term, rest, _ := strings.Cut(s, "\x00")
		words := strings.Split(rest, "\x00")
		for k := 0; k <= 2; k++ {
			m := newEditMatcher([]byte(term), k)
			for _, w := range append(words, term+"x", "", term) {
				want := typo.Distance([]rune(term), []rune(w), k) <= k
				if got := m.match([]byte(w)); got != want {
					t.Fatalf("%q ~%d %q: %v, want %v", term, k, w, got, want)
				}
			}
		}
	})
}

// FuzzCompareIDText: IDs compare as bleve compares keyword terms, by
// their decimal text.
func FuzzCompareIDText(f *testing.F) {
	for _, p := range [][2]int64{{98000001, 1000035}, {2000000, 10000000}, {9, 90}, {90, 9}, {100, 10}, {0, 5}, {-1, 3}, {9223372036854775807, 922337203685477580}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b int64) {
		want := strings.Compare(strconv.FormatInt(a, 10), strconv.FormatInt(b, 10))
		if got := compareValues(a, b, true); got != want {
			t.Fatalf("%d vs %d: %d, want %d", a, b, got, want)
		}
	})
}
