package analyst_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/indexer/nametable"
	"gds/query/analyst"
	"gds/snapshots"
)

// nameRecords makes n characters (IDs from 90000000) and a few solar
// systems with names of a small alphabet, so patterns match many names;
// it includes folding cases (ß, İ, Σ), regexp characters, spaces and
// hyphens. gen changes some names and drops some characters.
func nameRecords(n, gen int) indexertest.Records {
	parts := []string{"a", "b", "r", "ar", "ka", "ri", "é", "ß", "İ", "Σ", "-", " ", "1", ".", "(", "$", "x"}
	name := func(seed int) string { // the same in every generation
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		var b strings.Builder
		b.WriteString(parts[rng.IntN(6)]) // a letter first: names are not blank
		for range rng.IntN(8) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		if rng.IntN(3) == 0 {
			return strings.ToUpper(b.String()[:1]) + b.String()[1:]
		}
		return b.String()
	}
	recs := indexertest.Records{}
	for i := range n {
		nm := name(i)
		if gen > 0 && i%37 == 0 {
			continue // removed
		}
		if gen > 0 && i%29 == 0 {
			nm = "renamed " + name(-i)
		}
		recs[snapshots.Characters] = append(recs[snapshots.Characters],
			&snapshots.Character{Entity: indexertest.Named(90000000+int64(i), nm), CorporationID: 98000000 + int64(i%7)})
	}
	for i := range 60 {
		recs[snapshots.SolarSystems] = append(recs[snapshots.SolarSystems],
			&snapshots.SolarSystem{Entity: indexertest.Named(30000000+int64(i), name(n+i)), ConstellationID: 20000020, SecurityStatus: 0.5})
	}
	return recs
}

// namePattern makes a wildcard pattern from a name: a part of its folded
// form with characters replaced by ? and stars at either end or inside.
func namePattern(rng *rand.Rand, names []string) string {
	if rng.IntN(12) == 0 {
		return []string{"*", "a*", "*a*", "?", "*?", "K*", "*.*", "*(*", "r?*", "*ß*", "*ss*"}[rng.IntN(11)]
	}
	r := []rune(nametable.Fold(names[rng.IntN(len(names))]))
	i := rng.IntN(len(r))
	j := i + 1 + rng.IntN(len(r)-i)
	part := r[i:j]
	for k := range part {
		if rng.IntN(6) == 0 {
			part[k] = '?'
		}
	}
	p := string(part)
	if k := rng.IntN(len(part) + 1); rng.IntN(4) == 0 {
		p = string(part[:k]) + "*" + string(part[k:])
	}
	switch rng.IntN(4) {
	case 0:
		p = "*" + p + "*"
	case 1:
		p += "*"
	case 2:
		p = "*" + p
	}
	// The query string syntax needs some characters escaped.
	return strings.NewReplacer(" ", `\ `, "-", `\-`, "(", `\(`, ")", `\)`, ":", `\:`).Replace(p)
}

// Queries made only of name patterns are answered from the name tables:
// on generated names (folding, regexp characters, one- and two-letter
// patterns that scan every name, huge match sets), before and after an
// incremental build that renames and removes names (a delta table hiding
// base names), their totals, hits and stored fields equal bleve's own
// answers, alone and combined with and, or and not, in one category and
// across all.
func TestNameQueriesMatchBleve(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 24))
	m, a := openEngine(t, false)
	const n = 400 // all hits fit in one answer (MaxLimit)
	for gen := range 2 {
		recs := nameRecords(n, gen)
		res := indexertest.Build(t, m, indexer.BuildRequest{Snapshot: indexertest.Snapshot(t, recs), Trigger: "test"})
		if gen == 1 && !res.Incremental {
			t.Fatalf("second build not incremental: the delta tables go untested")
		}
		var names []string
		for _, r := range recs[snapshots.Characters] {
			names = append(names, r.(*snapshots.Character).Name)
		}
		forms := []string{"name:%s", "+name:%s +name:%s", "name:%s name:%s", "name:%s -name:%s", "-name:%s",
			"+name:%s -name:%s name:%s", "+name:%s name:%s", "-name:%s -name:%s",
			// With other fields: the name clauses become IDs.
			"+name:%s +corporation_id:98000003", "+name:%s -corporation_id:98000002", "-name:%s +corporation_id:98000001",
			"+corporation_id:98000004 +name:%s -name:%s", "corporation_id:98000005 name:%s", "+name:%s +words:ar"}
		for i := range 84 {
			form := forms[i%len(forms)]
			args := make([]any, strings.Count(form, "%s"))
			for k := range args {
				args[k] = namePattern(rng, names)
			}
			req := analyst.Request{Query: fmt.Sprintf(form, args...), Limit: analyst.MaxLimit}
			if i%3 != 0 {
				req.Category = snapshots.CategoryCharacter
			}
			if i%5 == 0 {
				req.Fields = []string{"corporation_id"}
			}
			// Few IDs: the clauses become the IDs they do not match, or
			// stay bleve's.
			restore := analyst.SetMaxNameIDs([]int{20000, 150, 10}[(i/3)%3])
			compareWithBleve(t, a, req)
			restore()
		}
		// Patterns matching most names, as the IDs of the names they do
		// not match.
		restore := analyst.SetMaxNameIDs(150)
		for _, q := range []string{"+name:*a* +corporation_id:98000003", "-name:* +corporation_id:98000003", "+name:?* -corporation_id:98000001",
			"+name:*a* -name:*b* +corporation_id:98000006"} {
			compareWithBleve(t, a, analyst.Request{Query: q, Category: snapshots.CategoryCharacter, Limit: analyst.MaxLimit})
		}
		restore()
	}
}

func compareWithBleve(t *testing.T, a *analyst.Engine, req analyst.Request) {
	t.Helper()
	got, err := a.Query(context.Background(), req)
	restore := analyst.SetNameTables(false)
	want, werr := a.Query(context.Background(), req)
	restore()
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, bleve's %v", req.Query, err, werr)
	}
	if err != nil {
		return
	}
	if got.Total != want.Total {
		t.Errorf("%q (%s): total %d, bleve's %d", req.Query, req.Category, got.Total, want.Total)
		return
	}
	if len(got.Hits) != len(want.Hits) {
		t.Errorf("%q (%s): %d hits, bleve's %d", req.Query, req.Category, len(got.Hits), len(want.Hits))
		return
	}
	if got.Total > uint64(len(got.Hits)) {
		return // the first hits: bleve's order for unscored queries is its own
	}
	byID := func(r *analyst.Result) map[string]analyst.Hit {
		out := map[string]analyst.Hit{}
		for _, h := range r.Hits {
			out[fmt.Sprint(h.Category, h.ID)] = h
		}
		return out
	}
	if g, w := byID(got), byID(want); !reflect.DeepEqual(g, w) {
		t.Errorf("%q (%s): %d hits differ from bleve's %d", req.Query, req.Category, len(g), len(w))
	}
}

// A pattern matching more names than one answer holds counts them all and
// returns the first hits, shortest names first.
func TestNameQueryLargeMatch(t *testing.T) {
	recs := indexertest.Records{}
	for i := range 3000 {
		recs[snapshots.Characters] = append(recs[snapshots.Characters],
			&snapshots.Character{Entity: indexertest.Named(90000000+int64(i), fmt.Sprintf("Kari %s", strings.Repeat("a", 1+i%50))), CorporationID: 98000001})
	}
	a := analyst.New(indexertest.Manager(t, indexertest.Snapshot(t, recs)))
	for _, q := range []string{"name:*a*", "name:kari*", "name:*", "*", "name:*ri\\ a*", "-name:zz*"} {
		res, err := a.Query(context.Background(), analyst.Request{Query: q, Category: snapshots.CategoryCharacter, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 3000 || len(res.Hits) != 3 {
			t.Fatalf("%s: total %d, %d hits; want 3000 and 3", q, res.Total, len(res.Hits))
		}
		for k, h := range res.Hits {
			if want := int64(90000000 + 50*k); h.ID != want || h.Name != "Kari a" {
				t.Errorf("%s: hit %d is %d %q, want %d %q", q, k, h.ID, h.Name, want, "Kari a")
			}
		}
	}
}
