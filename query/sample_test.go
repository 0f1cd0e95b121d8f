package query_test

import (
	"context"
	"slices"
	"testing"

	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

// TestSampleLocalizedNames searches the real SDE names of the committed
// sample in every language they come in: a slice of each localized name
// (Japanese, Chinese, Russian, Korean included) finds its type in that
// language, and the whole name finds it strictly.
func TestSampleLocalizedNames(t *testing.T) {
	const sample = "../snapshots/sample"
	snap, err := snapshots.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	type named struct {
		id   int64
		lang string
		name string
	}
	var cases []named
	seen := map[string]bool{}
	err = snap.Each(snapshots.Types, func(rec snapshots.Record, _ snapshots.Line) error {
		ty := rec.(*snapshots.Type)
		for lang, n := range ty.Names {
			if !seen[lang] && len([]rune(n)) >= 4 {
				seen[lang] = true
				cases = append(cases, named{ty.ID, lang, n})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"ja", "zh", "ru", "ko", "de"} {
		if !seen[lang] {
			t.Fatalf("the sample has no %s type names", lang)
		}
	}
	s := query.New(indexertest.Manager(t, sample))
	cats := []snapshots.Category{snapshots.CategoryInventoryType}
	for _, c := range cases {
		r := []rune(c.name)
		part := string(r[1:min(len(r), 4)])
		for _, req := range []query.Request{
			{Text: part, Language: c.lang, Categories: cats},
			{Text: c.name, Language: c.lang, Strict: true, Categories: cats},
		} {
			res, err := s.Search(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(res.IDs[snapshots.CategoryInventoryType], c.id) {
				t.Errorf("%s %q (strict %v) does not find type %d %q: %v", c.lang, req.Text, req.Strict, c.id, c.name, res.IDs)
			}
		}
	}
}
