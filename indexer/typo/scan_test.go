package typo

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"
	"unicode/utf8"

	"gds/indexer/nametable"
	"gds/snapshots/envtest"
)

// TestRecallAgainstScan measures a search over a real table against an
// exhaustive scan: for each text of a suggest request list, the distinct
// names within one edit of the whole text (a one-edit typo's own name
// among them), the closest and then the first in rank found by reading
// every name of a length within one of the text's, and the share of the
// first ten of them that the search's ten hold. It runs when
// GDS_TYPO_TABLE names a generation's category directory (base.tbl and
// base.typ) and GDS_TYPO_TEXTS a request list (the bench's
// route-suggest,.lua); GDS_TYPO_N texts of it (default 200):
//
//	GDS_TYPO_TABLE=/var/tmp/w10m/data/generations/000001/character \
//	  GDS_TYPO_TEXTS='/var/tmp/w10m/route-suggest,.lua' go test -run RecallAgainstScan -v ./indexer/typo
func TestRecallAgainstScan(t *testing.T) {
	env := envtest.Getenv(t, "a category directory and a request list", "GDS_TYPO_TABLE", "GDS_TYPO_TEXTS")
	dir, list := env[0], env[1]
	n := 200
	if v, err := strconv.Atoi(os.Getenv("GDS_TYPO_N")); err == nil {
		n = v
	}
	tb, err := nametable.Load(dir + "/base.tbl")
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	x, err := Open(dir+"/base.typ", tb.Len())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.KeepFirsts(tb); err != nil {
		t.Fatal(err)
	}
	texts := requestTexts(t, list)
	texts = texts[:min(n, len(texts))]
	want, held := 0, 0
	for _, text := range texts {
		ref := scanClosest(tb, text, 10)
		var got []string
		for _, h := range x.Search([]byte(text), tb, nil, 10) {
			got = append(got, string(tb.Name(h.O)))
		}
		want += len(ref)
		for _, name := range ref {
			if slices.Contains(got, name) {
				held++
			} else if testing.Verbose() {
				t.Logf("%q: %q, within one edit, not in %q", text, name, got)
			}
		}
	}
	recall := float64(held) / float64(max(want, 1))
	t.Logf("%d texts: the search's ten hold %d of the scan's %d names within one edit (%.1f%%)", len(texts), held, want, 100*recall)
	if want == 0 || recall < 0.97 {
		t.Errorf("recall %.1f%% of %d names", 100*recall, want)
	}
}

// requestTexts reads the folded search texts of a request list's paths.
func requestTexts(t *testing.T, path string) []string {
	var texts []string
	for _, p := range envtest.RequestPaths(t, path) {
		for _, m := range regexp.MustCompile(`[?&]search=([^&]*)`).FindAllStringSubmatch(p, -1) {
			s, err := url.QueryUnescape(m[1])
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, nametable.Fold(s))
		}
	}
	if len(texts) == 0 {
		t.Fatalf("%s holds no search texts", path)
	}
	return texts
}

// scanClosest returns the first limit distinct names of tb within one edit
// of text, the closest first, then in rank order, reading every name
// whose length in runes is within one of the text's (the table ranks its
// names by length, so they are one run of ordinals).
func scanClosest(tb *nametable.Table, text string, limit int) []string {
	tr := []rune(text)
	runesAt := func(o int) int { return utf8.RuneCount(tb.Name(uint32(o))) }
	lo := sort.Search(tb.Len(), func(o int) bool { return runesAt(o) >= len(tr)-1 })
	hi := sort.Search(tb.Len(), func(o int) bool { return runesAt(o) > len(tr)+1 })
	var byDist [2][]string
	seen := map[string]bool{}
	var rs []rune
	for o := lo; o < hi; o++ {
		name := tb.Name(uint32(o))
		rs = appendRunes(rs[:0], name)
		if d := Distance(tr, rs, 1); d <= 1 && !seen[string(name)] {
			seen[string(name)] = true
			byDist[d] = append(byDist[d], string(name))
		}
	}
	all := slices.Concat(byDist[0], byDist[1])
	return all[:min(limit, len(all))]
}
