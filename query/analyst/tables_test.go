package analyst_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/indexer/nametable"
	"gds/query/analyst"
	"gds/snapshots"
)

// tableRecords are rangeRecords with ID keywords of both lengths (NPC
// corporations of seven digits, player ones of eight, whose text order
// differs from their numeric one), alliances for some characters, and
// names of several words.
func tableRecords(n, gen int) indexertest.Records {
	recs := rangeRecords(n, gen)
	words := []string{"kari", "ari", "navy", "Navy", "ka", "b", "ri", "vanhanen", "ßeta", "İlk", "o'neil", "a.b"}
	for _, r := range recs[snapshots.Characters] {
		c := r.(*snapshots.Character)
		k := int(c.ID - 90000000)
		switch k % 5 {
		case 0:
			c.CorporationID = 1000000 + int64(k%3)
		default:
			c.CorporationID = 98000000 + int64(k%7)
		}
		if k%3 == 0 {
			c.AllianceID = 99000000 + int64(k%4)
		}
		if k%4 == 0 { // a second and third word
			c.Name += " " + words[k%len(words)]
			if k%8 == 0 {
				c.Name += "-" + words[(k/8)%len(words)]
			}
		}
	}
	return recs
}

// Characters are answered from their name tables and value columns, not
// bleve: on the same snapshot, built once with characters in bleve
// (Options.BleveCharacters) and once without, every form of clause of the
// fields characters have (names, words, IDs, ID keywords, dates; exact,
// phrase, wildcard, regexp, fuzzy, range, exists; and/or/not of them)
// matches the same documents, in the character category and across all;
// sorts give the same order, facets the same counts, exports the same
// rows. Scores are the tables' own: the best first.
func TestTableQueriesMatchBleve(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 31))
	mb, ab := openEngine(t, true)
	mt, at := openEngine(t, false)
	const n = 400
	ctx := context.Background()
	for gen := range 2 {
		recs := tableRecords(n, gen)
		snap := indexertest.Snapshot(t, recs)
		for _, m := range []*indexer.Manager{mb, mt} {
			res, err := m.Build(ctx, indexer.BuildRequest{Snapshot: snap, Trigger: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if gen == 1 && !res.Incremental {
				t.Fatal("second build not incremental: the delta tables go untested")
			}
		}
		g := mt.Acquire()
		if !g.TablesAnswer(snapshots.CategoryCharacter) {
			t.Fatal("characters are in bleve by default")
		}
		g.Release()
		g = mb.Acquire()
		if g.TablesAnswer(snapshots.CategoryCharacter) {
			t.Fatal("BleveCharacters left characters out of bleve")
		}
		g.Release()

		var names, words []string
		for _, r := range recs[snapshots.Characters] {
			c := r.(*snapshots.Character)
			names = append(names, c.Name)
			if err := indexer.EachWord([]byte(nametable.Fold(c.Name)), func(w []byte) bool { words = append(words, string(w)); return true }); err != nil {
				t.Fatal(err)
			}
		}
		esc := strings.NewReplacer(" ", `\ `, "-", `\-`, "(", `\(`, ")", `\)`, ":", `\:`, "'", `\'`, "+", `\+`, "/", `\/`, "~", `\~`, "^", `\^`, "*", `\*`, "?", `\?`, `"`, `\"`)
		word := func() string { return words[rng.IntN(len(words))] }
		name := func() string { return nametable.Fold(names[rng.IntN(len(names))]) }
		char := func() string {
			c := recs[snapshots.Characters][rng.IntN(len(recs[snapshots.Characters]))].(*snapshots.Character)
			return strconv.FormatInt(c.ID, 10)
		}
		corp := func() string {
			return []string{"1000000", "1000001", "1000002", "98000000", "98000003", "98000006", "98000009"}[rng.IntN(7)]
		}
		clause := func() string {
			switch rng.IntN(26) {
			case 0:
				return "words:" + esc.Replace(word())
			case 1:
				return esc.Replace(word())
			case 2:
				return "words:" + esc.Replace(word()) + " words:" + esc.Replace(word())
			case 3:
				w := []rune(word())
				return "words:" + esc.Replace(string(w[:1+rng.IntN(len(w))])) + "*"
			case 4:
				return "words:/" + []string{"ka.*", ".*ri", "[a-c]+", "nav.", "x"}[rng.IntN(5)] + "/"
			case 5:
				return "words:" + esc.Replace(word()) + "~" + strconv.Itoa(1+rng.IntN(2))
			case 6:
				return "name:" + esc.Replace(name()) + "*"
			case 7:
				return "name:" + esc.Replace(name()) + "~1"
			case 8:
				return "name:/" + []string{"ka.*", ".*ri.*", "[a-c]+", ".", "k.r.*"}[rng.IntN(5)] + "/"
			case 9:
				return "name:" + namePattern(rng, names)
			case 10:
				return "id:" + char()
			case 11:
				return "id:" + []string{"9000001*", "*7", "90000?0?", "9*"}[rng.IntN(4)]
			case 12:
				return "corporation_id:" + corp()
			case 13:
				return "corporation_id:" + []string{"98*", "1000*", "*2", "?8000003"}[rng.IntN(4)]
			case 14:
				return "alliance_id:" + []string{"*", "99000001", "9900000?"}[rng.IntN(3)]
			case 15:
				return "alliance_id:99000003"
			case 16:
				return rangeClause(rng, snapshots.CategoryCharacter)
			case 17:
				return "birthday:*"
			case 18:
				return "id:/9000.*5/"
			case 19:
				return "corporation_id:/98.*/"
			case 20:
				return "corporation_id:/1000.*/"
			case 21:
				return "words:" + esc.Replace(word()) + "^3"
			case 22:
				return "name:" + esc.Replace(name())
			case 23:
				return fmt.Sprintf(`"%s %s"`, strings.ReplaceAll(word(), `"`, `\"`), strings.ReplaceAll(word(), `"`, `\"`))
			case 24:
				return `name:"` + strings.ReplaceAll(name(), `"`, `\"`) + `"`
			}
			return "*"
		}
		forms := []string{"%s", "+%s +%s", "%s %s", "%s -%s", "-%s", "+%s %s", "+%s +%s -%s"}
		matched, scored, refused := 0, 0, 0
		defer func() {
			t.Logf("gen %d: %d queries matched, %d of them ranked; %d refused alike", gen, matched, scored, refused)
			if matched < 250 || scored < 50 {
				t.Errorf("gen %d: only %d queries matched, %d ranked: the comparison says little", gen, matched, scored)
			}
		}()
		for i := 0; i < 500; i++ {
			form := forms[rng.IntN(len(forms))]
			args := make([]any, strings.Count(form, "%s"))
			for k := range args {
				args[k] = clause()
			}
			q := fmt.Sprintf(form, args...)
			if q == "*" || strings.Count(q, "*") == len(q) {
				continue
			}
			cat := snapshots.CategoryCharacter
			if i%4 == 3 {
				cat = "" // every category: the tables' hits merged with bleve's
			}
			req := analyst.Request{Query: q, Category: cat, Limit: analyst.MaxLimit, Fields: []string{"*"}}
			want, werr := ab.Query(ctx, req)
			got, gerr := at.Query(ctx, req)
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("gen %d %q in %q: bleve's error %v, the tables' %v", gen, q, cat, werr, gerr)
			}
			if werr != nil {
				refused++
				if refused < 4 {
					t.Logf("refused alike: %q: %v / %v", q, werr, gerr)
				}
				continue
			}
			if got.Total > 0 {
				matched++
				if got.Hits[0].Score > 0 {
					scored++
				}
			}
			if want.Total != got.Total || !reflect.DeepEqual(hitSet(want.Hits), hitSet(got.Hits)) {
				t.Fatalf("gen %d %q in %q: bleve %d, the tables %d; only bleve's %v, only the tables' %v", gen, q, cat, want.Total, got.Total,
					minus(hitSet(want.Hits), hitSet(got.Hits)), minus(hitSet(got.Hits), hitSet(want.Hits)))
			}
			for k := 1; k < len(got.Hits); k++ {
				if got.Hits[k].Score > got.Hits[k-1].Score && got.Hits[k].Category == got.Hits[k-1].Category {
					t.Fatalf("gen %d %q: hit %d scores %v after %v", gen, q, k, got.Hits[k].Score, got.Hits[k-1].Score)
				}
			}
			// Sorted, faceted, exported: the same order and counts.
			sorted := req
			sorted.Sort = [][]string{{"corporation_id", "id"}, {"-birthday", "-id"}, {"-alliance_id", "birthday", "id"}, {"id"}}[rng.IntN(4)]
			sorted.Limit = 1 + rng.IntN(50)
			sorted.Facets = []string{"corporation_id", "alliance_id", "birthday"}
			sorted.FacetSize = analyst.MaxFacetSize
			if cat == "" {
				sorted.Facets = sorted.Facets[1:2]
			}
			want, werr = ab.Query(ctx, sorted)
			restore := analyst.SetRecordsPerScan([]uint64{0, 1 << 40}[i%2]) // records' values, or the columns'
			got, gerr = at.Query(ctx, sorted)
			restore()
			if werr != nil || gerr != nil {
				t.Fatalf("gen %d %q sorted %v: %v, %v", gen, q, sorted.Sort, werr, gerr)
			}
			if !reflect.DeepEqual(hitIDs(want.Hits), hitIDs(got.Hits)) {
				t.Fatalf("gen %d %q in %q sorted %v: bleve %v, the tables %v", gen, q, cat, sorted.Sort, hitIDs(want.Hits), hitIDs(got.Hits))
			}
			if !reflect.DeepEqual(facetCounts(want.Facets), facetCounts(got.Facets)) {
				t.Fatalf("gen %d %q in %q facets: bleve %+v, the tables %+v", gen, q, cat, want.Facets, got.Facets)
			}
			if i%10 == 0 {
				sorted.Facets = nil
				sorted.Limit = 0
				if w, g := exportRows(t, ab, sorted), exportRows(t, at, sorted); w != g {
					t.Fatalf("gen %d %q in %q export sorted %v:\nbleve\n%s\nthe tables\n%s", gen, q, cat, sorted.Sort, w, g)
				}
			}
		}
	}
}

// A phrase ("kari navy") matches the names with those words one after
// another, in the tables (bleve's words field keeps no positions, so its
// phrases match nothing): checked against the records' words.
func TestTablePhrases(t *testing.T) {
	recs := tableRecords(600, 0)
	a := analyst.New(indexertest.Manager(t, indexertest.Snapshot(t, recs)))
	wordsOf := map[int64][]string{}
	var pairs [][2]string
	for _, r := range recs[snapshots.Characters] {
		c := r.(*snapshots.Character)
		if err := indexer.EachWord([]byte(nametable.Fold(c.Name)), func(w []byte) bool {
			wordsOf[c.ID] = append(wordsOf[c.ID], string(w))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if ws := wordsOf[c.ID]; len(ws) >= 2 {
			pairs = append(pairs, [2]string{ws[0], ws[1]}, [2]string{ws[1], ws[0]})
		}
	}
	if len(pairs) < 50 {
		t.Fatalf("only %d word pairs", len(pairs))
	}
	for i, pair := range pairs[:min(len(pairs), 200)] {
		q := fmt.Sprintf(`"%s %s"`, strings.ReplaceAll(pair[0], `"`, `\"`), strings.ReplaceAll(pair[1], `"`, `\"`))
		if i%3 == 0 {
			q = "words:" + q
		}
		var want []string
		for id, ws := range wordsOf {
			for k := 0; k+1 < len(ws); k++ {
				if ws[k] == pair[0] && ws[k+1] == pair[1] {
					want = append(want, fmt.Sprintf("character/%d", id))
					break
				}
			}
		}
		got, err := a.Query(context.Background(), analyst.Request{Query: q, Category: snapshots.CategoryCharacter, Limit: analyst.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		ids := hitIDs(got.Hits)
		slices.Sort(ids)
		slices.Sort(want)
		if int(got.Total) != len(want) || !reflect.DeepEqual(ids, want) {
			t.Fatalf("%s: got %d %v, want %v", q, got.Total, ids, want)
		}
		for _, h := range got.Hits {
			if h.Score <= 0 {
				t.Fatalf("%s: hit %d scores %v: a phrase ranks", q, h.ID, h.Score)
			}
		}
	}
}

// Phrases match in bleve's categories too: the name fields keep their
// words' places (term vectors), without which bleve answered no phrase.
func TestPhrasesInBleve(t *testing.T) {
	recs := tableRecords(50, 0)
	for i, name := range []string{"Caldari Navy", "Navy of Caldari", "caldari navy reserve", "Caldari-Navy", "Caldari  State Navy"} {
		recs[snapshots.Corporations] = append(recs[snapshots.Corporations], &snapshots.Corporation{
			Entity: indexertest.Named(98100000+int64(i), name), Ticker: fmt.Sprint("P", i)})
	}
	a := analyst.New(indexertest.Manager(t, indexertest.Snapshot(t, recs)))
	for q, want := range map[string][]string{
		`"caldari navy"`:              {"corporation/98100000", "corporation/98100002", "corporation/98100003"},
		`words:"navy of"`:             {"corporation/98100001"},
		`"caldari state navy"`:        {"corporation/98100004"},
		`+"caldari navy" -reserve`:    {"corporation/98100000", "corporation/98100003"},
		`name:"caldari navy reserve"`: {"corporation/98100002"},
	} {
		res, err := a.Query(context.Background(), analyst.Request{Query: q, Category: snapshots.CategoryCorporation, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(res.Hits)
		slices.Sort(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
}

// TestTableQueryLargeMatch: beyond maxSortAll matches, a sort picks its
// candidates by its first key: the same first hits as sorting them all.
func TestTableQueryLargeMatch(t *testing.T) {
	m := indexertest.Manager(t, indexertest.Snapshot(t, tableRecords(3000, 0)))
	a := analyst.New(m)
	ctx := context.Background()
	for _, s := range [][]string{{"-birthday", "id"}, {"corporation_id", "-id"}, {"id"}, {"-alliance_id", "id"}, {"-score", "id"}} {
		for _, q := range []string{"*", "name:*a*", "words:kari", "birthday:>\"2005-01-01\""} {
			req := analyst.Request{Query: q, Category: snapshots.CategoryCharacter, Sort: s, Limit: 37}
			all, err := a.Query(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			restore := analyst.SetMaxSortAll(10)
			few, err := a.Query(ctx, req)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if all.Total != few.Total || !reflect.DeepEqual(hitIDs(all.Hits), hitIDs(few.Hits)) {
				t.Fatalf("%q sorted %v: all sorted %d %v, first key first %d %v", q, s, all.Total, hitIDs(all.Hits), few.Total, hitIDs(few.Hits))
			}
		}
	}
}

func hitSet(hits []analyst.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s/%d %s %v", h.Category, h.ID, h.Name, h.Fields))
	}
	sort.Strings(out)
	return out
}

// minus is what of a is not in b.
func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func hitIDs(hits []analyst.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s/%d", h.Category, h.ID))
	}
	return out
}

// facetCounts is each facet's counts, terms in any order.
func facetCounts(fs []analyst.FacetResult) []string {
	var out []string
	for _, f := range fs {
		var bs []string
		for _, b := range f.Buckets {
			bs = append(bs, fmt.Sprintf("%s=%d", b.Term, b.Count))
		}
		if f.Type == indexer.Keyword {
			slices.Sort(bs)
		}
		out = append(out, fmt.Sprintf("%s total %d missing %d other %d: %v", f.Field, f.Total, f.Missing, f.Other, bs))
	}
	return out
}

func exportRows(t *testing.T, a *analyst.Engine, req analyst.Request) string {
	t.Helper()
	var b bytes.Buffer
	err := a.Export(context.Background(), req, func(total uint64, columns []string) error {
		fmt.Fprintf(&b, "total %d %v\n", total, columns)
		return nil
	}, func(h analyst.Hit) error {
		fmt.Fprintf(&b, "%s/%d %s %v\n", h.Category, h.ID, h.Name, h.Fields)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&b, "error %v\n", err)
	}
	return b.String()
}

// A canceled analyst's query over characters stops with the context's
// error, whatever it was doing.
func TestTableQueryCanceled(t *testing.T) {
	a := analyst.New(indexertest.Manager(t, indexertest.Snapshot(t, tableRecords(300, 0))))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, q := range []string{"*", "words:kari", "name:/k.*/", "words:kar~1"} {
		_, err := a.Query(ctx, analyst.Request{Query: q, Category: snapshots.CategoryCharacter, Sort: []string{"-birthday"}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want the context's error", q, err)
		}
	}
}
