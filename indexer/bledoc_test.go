package indexer

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	bdoc "github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"

	"gds/snapshots"
)

// fieldSummary is what bleve indexes of a field: its options, token count
// and each term's frequency, and any term locations.
type fieldSummary struct {
	options  index.FieldIndexingOptions
	arrayPos string
	length   int
	freqs    map[string]int
	locs     int
	value    string // stored fields only
}

func summarize(t *testing.T, doc index.Document) map[string][]fieldSummary {
	t.Helper()
	out := map[string][]fieldSummary{}
	doc.VisitFields(func(f index.Field) {
		f.Analyze()
		s := fieldSummary{options: f.Options(), arrayPos: fmt.Sprint(f.ArrayPositions()), length: f.AnalyzedLength(), freqs: map[string]int{}}
		for term, tf := range f.AnalyzedTokenFrequencies() {
			if string(tf.Term) != term {
				t.Errorf("field %s: term %q keyed %q", f.Name(), tf.Term, term)
			}
			s.freqs[term] = tf.Frequency()
			s.locs += len(tf.Locations)
		}
		if f.Options().IsStored() {
			s.value = string(f.Value())
		}
		out[f.Name()] = append(out[f.Name()], s)
	})
	return out
}

// reference makes d's document the way bleve's own field types and the
// mapping's analyzers make it.
func reference(t *testing.T, ds *documents, d docInfo) *bdoc.Document {
	t.Helper()
	doc := bdoc.NewDocument(strconv.FormatInt(d.id, 10))
	doc.AddField(bdoc.NewTextFieldCustom(FieldName, nil, []byte(d.name), index.IndexField, ds.exact))
	doc.AddField(bdoc.NewTextFieldCustom(FieldWords, nil, []byte(d.name), index.IndexField, ds.words))
	for _, lang := range slices.Sorted(maps.Keys(d.names)) {
		if lang != "en" {
			doc.AddField(bdoc.NewTextFieldCustom(LocalizedField(lang), nil, []byte(d.names[lang]), index.IndexField, ds.exact))
		}
	}
	kw := keywordAnalyzer()
	for i, c := range d.access {
		doc.AddField(bdoc.NewTextFieldCustom(FieldAccess, []uint64{uint64(i)}, []byte(strconv.FormatInt(c, 10)), index.IndexField, kw))
	}
	doc.AddIDField()
	return doc
}

// keywordAnalyzer is the analyzer of the mapping's access field.
var keywordAnalyzer = sync.OnceValue(func() analysis.Analyzer {
	m, err := Mapping()
	if err != nil {
		panic(err)
	}
	return m.AnalyzerNamed(keyword.Name)
})

func testDocuments(t testing.TB) *documents {
	m, err := Mapping()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := newDocuments(m)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func checkDocument(t *testing.T, ds *documents, d docInfo) {
	t.Helper()
	got, want := ds.document(d), reference(t, ds, d)
	if got.ID() != want.ID() {
		t.Fatalf("%q: id %q, want %q", d.name, got.ID(), want.ID())
	}
	g, w := summarize(t, got), summarize(t, want)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("%q:\n got  %v\n want %v", d.name, g, w)
	}
	got.AddIDField() // bleve calls it per batch: still one _id
	if n := len(summarize(t, got)[docIDField]); n != 1 {
		t.Errorf("%q: %d _id fields after AddIDField again", d.name, n)
	}
}

// The builder's documents index exactly what bleve's documents analysed by
// the mapping's analyzers index, for names on the fast path and off it.
func TestDocumentMatchesAnalyzers(t *testing.T) {
	ds := testDocuments(t)
	names := []string{"Ka-Ren Kitoda", "Tibus Korhonen", "kari kari Kari", "abc123 4x4", "  spaced  out ", "-Ka", "a--b",
		"O'Neil", "a.b", "x_y", "1.5-2", "Ünïcode Näme", "ÆSIR", "Straße", "日本語 名前", "Jita", "J", "9", "",
		"p An", "tab\there", "semi;colon", "Ka-Ren  O'm"}
	for i, name := range names {
		checkDocument(t, ds, docInfo{id: int64(90000000 + i), name: name})
	}
	checkDocument(t, ds, docInfo{id: 34, name: "Tritanium", names: snapshots.Localized{"en": "Tritanium", "de": "Tritanium DE", "ja": "トリタニウム", "ru": "Тританиум"}})
	checkDocument(t, ds, docInfo{id: 1035466617946, name: "Jita - Keepstar", access: []int64{90000001, 90000002, 90000001}})
}

// FuzzDocumentMatchesAnalyzers checks any name against bleve's analysis.
func FuzzDocumentMatchesAnalyzers(f *testing.F) {
	for _, s := range []string{"Ka-Ren Kitoda", "O'm", "p An", "ÆSIR x", "a1 b2-c3", ""} {
		f.Add(s)
	}
	ds := testDocuments(f)
	f.Fuzz(func(t *testing.T, name string) {
		checkDocument(t, ds, docInfo{id: 90000001, name: name})
	})
}
