package indexer

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/numeric"
	index "github.com/blevesearch/bleve_index_api"

	"gds/snapshots"
)

// fieldSummary is what bleve indexes of a field: its options, token count
// and each term's frequency, and any term locations (position, bytes).
type fieldSummary struct {
	options  index.FieldIndexingOptions
	arrayPos string
	length   int
	freqs    map[string]int
	locs     map[string]string
	value    string // stored fields only
}

func summarize(t *testing.T, doc index.Document) map[string][]fieldSummary {
	t.Helper()
	out := map[string][]fieldSummary{}
	doc.VisitFields(func(f index.Field) {
		f.Analyze()
		s := fieldSummary{options: f.Options(), arrayPos: fmt.Sprint(f.ArrayPositions()), length: f.AnalyzedLength(), freqs: map[string]int{}, locs: map[string]string{}}
		for term, tf := range f.AnalyzedTokenFrequencies() {
			if string(tf.Term) != term {
				t.Errorf("field %s: term %q keyed %q", f.Name(), tf.Term, term)
			}
			s.freqs[term] = tf.Frequency()
			for _, l := range tf.Locations {
				s.locs[term] += fmt.Sprintf("%d@%d-%d%v ", l.Position, l.Start, l.End, l.ArrayPositions)
			}
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
	// The name fields' options as the mapping gives them (term vectors).
	names := testMapping().DefaultMapping.Properties
	opts := func(field string) index.FieldIndexingOptions {
		fm := names[field].Fields[0]
		return fm.Options()
	}
	doc.AddField(bdoc.NewTextFieldCustom(FieldName, nil, []byte(d.name), opts(FieldName), ds.exact))
	doc.AddField(bdoc.NewTextFieldCustom(FieldWords, nil, []byte(d.name), opts(FieldWords), ds.words))
	for _, lang := range slices.Sorted(maps.Keys(d.names())) {
		if lang != "en" {
			doc.AddField(bdoc.NewTextFieldCustom(LocalizedField(lang), nil, []byte(d.names()[lang]), opts(LocalizedField(lang)), ds.exact))
		}
	}
	kw := keywordAnalyzer()
	for i, c := range d.access() {
		doc.AddField(bdoc.NewTextFieldCustom(FieldAccess, []uint64{uint64(i)}, []byte(strconv.FormatInt(c, 10)), index.IndexField, kw))
	}
	// The attributes as the mapping itself maps them from plain values.
	data := attributeData(d.attrs())
	mapped := bdoc.NewDocument(doc.ID())
	if err := testMapping().MapDocument(mapped, data); err != nil {
		t.Fatal(err)
	}
	for _, f := range mapped.Fields {
		if f.EncodedFieldType() == 'd' {
			f = &atDateShifts{Field: f}
		}
		doc.AddField(f)
	}
	doc.AddIDField()
	return doc
}

// atDateShifts is bleve's own date field with only its terms at
// DateShifts.
type atDateShifts struct{ bdoc.Field }

func (f *atDateShifts) AnalyzedTokenFrequencies() index.TokenFrequencies {
	out := index.TokenFrequencies{}
	for term, tf := range f.Field.AnalyzedTokenFrequencies() {
		shift, err := numeric.PrefixCoded(term).Shift()
		if err == nil && slices.Contains(DateShifts[:], shift) {
			out[term] = tf
		}
	}
	return out
}

func (f *atDateShifts) AnalyzedLength() int { return len(DateShifts) }

// attributeData is attrs as plain values, as a caller of bleve's Index
// would give them.
func attributeData(attrs []attr) map[string]any {
	data := map[string]any{}
	for _, a := range attrs {
		f := attributeFields[a.field]
		var v any
		switch {
		case f.Type == Numeric:
			v = a.num
		case f.Type == DateTime:
			v = time.Unix(int64(a.num), 0).UTC()
		case a.str != "":
			v = a.str
		default:
			v = strconv.FormatInt(int64(a.num), 10)
		}
		if a.field == attrService {
			list, _ := data[f.Name].([]any)
			v = append(list, v)
		}
		data[f.Name] = v
	}
	return data
}

var testMapping = sync.OnceValue(func() *mapping.IndexMappingImpl {
	m, err := Mapping()
	if err != nil {
		panic(err)
	}
	return m
})

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
	if n := len(summarize(t, got)[DocIDField]); n != 1 {
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
	checkDocument(t, ds, newDoc(34, "Tritanium", docMore{names: snapshots.Localized{"en": "Tritanium", "de": "Tritanium DE", "ja": "トリタニウム", "ru": "Тританиум"}}))
	checkDocument(t, ds, newDoc(1035466617946, "Jita - Keepstar", docMore{access: []int64{90000001, 90000002, 90000001}}))
	// Every attribute field, from real records.
	u := testUniverse()
	for _, rec := range attributeRecords() {
		d := newDoc(rec.Key(), rec.DisplayName(), docMore{attrs: attributes(rec, u)})
		if len(d.attrs()) == 0 {
			t.Errorf("%s: no attributes", d.name)
		}
		checkDocument(t, ds, d)
	}
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

func testUniverse() *universe {
	return &universe{constellation: map[int64]int64{30000142: 20000020}, region: map[int64]int64{20000020: 10000002}}
}

// attributeRecords are records with every attribute field.
func attributeRecords() []snapshots.Named {
	fuel := time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)
	birthday := time.Date(2003, 5, 6, 7, 8, 9, 0, time.UTC)
	mg := int64(1857)
	early := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) // before bleve's first instant
	return []snapshots.Named{
		&snapshots.Structure{ID: 1035466617948, Name: "One Service", SystemID: 30000142, State: "shield_vulnerable",
			Services: []snapshots.Service{{Name: "Market", State: "online"}}},
		&snapshots.Character{Entity: snapshots.Entity{ID: 90000002, Name: "Early Bird"}, CorporationID: 98000001, Birthday: &early},
		&snapshots.Structure{ID: 1035466617946, Name: "Jita - Keepstar", TypeID: 35834, CorporationID: 98000001, SystemID: 30000142,
			State: "armor_reinforce", ReinforceWeekday: 6, ReinforceHour: 23, FuelExpires: &fuel,
			Services: []snapshots.Service{{Name: "Clone Bay", State: "online"}, {Name: "Market", State: "offline"}, {Name: "Manufacturing (Standard Ships)", State: "online"}}},
		&snapshots.Structure{ID: 1035466617947, Name: "Low", SystemID: 1, State: "hull_reinforce"},
		&snapshots.Character{Entity: snapshots.Entity{ID: 90000001, Name: "Ka-Ren Kitoda"}, CorporationID: 98000001, AllianceID: 99000001, Birthday: &birthday},
		&snapshots.Corporation{Entity: snapshots.Entity{ID: 98000001, Name: "Kari Corp"}, Ticker: "KäRI", MemberCount: 1234, CEOID: 90000001, AllianceID: 99000001},
		&snapshots.Alliance{Entity: snapshots.Entity{ID: 99000001, Name: "Kari Alliance"}, Ticker: "K-A"},
		&snapshots.Type{Entity: snapshots.Entity{ID: 34, Name: "Tritanium"}, GroupID: 18, TypeDetails: snapshots.TypeDetails{MarketGroupID: &mg}, Published: true},
		&snapshots.Type{Entity: snapshots.Entity{ID: 35, Name: "Unpublished"}, GroupID: 18},
		&snapshots.SolarSystem{Entity: snapshots.Entity{ID: 30000142, Name: "Jita"}, ConstellationID: 20000020, SecurityStatus: 0.9459},
		&snapshots.SolarSystem{Entity: snapshots.Entity{ID: 30000143, Name: "Null"}, ConstellationID: 1, SecurityStatus: -0.35},
		&snapshots.Constellation{Entity: snapshots.Entity{ID: 20000020, Name: "Kimotoro"}, RegionID: 10000002},
		&snapshots.Station{Entity: snapshots.Entity{ID: 60003760, Name: "Jita IV - Moon 4"}, StationDetails: snapshots.StationDetails{SystemID: 30000142, TypeID: 1531, Owner: 1000035}},
		&snapshots.Agent{Entity: snapshots.Entity{ID: 3008416, Name: "Antaken Kamola"}, CorporationID: 1000035, Level: 4, DivisionID: 22},
	}
}

// FieldValues gives, from the record, what bleve gave back when it stored
// the attributes (before fields layout 4): every field of every category,
// IDs as text, numbers as float64, instants in RFC 3339, one online
// service as a value and several as a list in order, instants bleve cannot
// index left out.
func TestFieldValuesAreWhatBleveStored(t *testing.T) {
	m, err := Mapping()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range attributeFields {
		m.DefaultMapping.Properties[f.Name].Fields[0].Store = true
		names = append(names, f.Name)
	}
	idx, err := bleve.NewMemOnly(m)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	g := &Generation{}
	g.univOnce.Do(func() { g.univ = testUniverse() })
	for _, rec := range attributeRecords() {
		id := strconv.FormatInt(rec.Key(), 10)
		if err := idx.Index(id, attributeData(attributes(rec, g.univ))); err != nil {
			t.Fatal(err)
		}
		sr := bleve.NewSearchRequest(bleve.NewDocIDQuery([]string{id}))
		sr.Fields = []string{"*"}
		res, err := idx.Search(sr)
		if err != nil || len(res.Hits) != 1 {
			t.Fatalf("%s: %v, %v", id, res, err)
		}
		want := res.Hits[0].Fields
		if want == nil {
			want = map[string]any{}
		}
		if got := g.FieldValues(rec, names); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q:\n got  %#v\n want %#v", id, rec.DisplayName(), got, want)
		}
	}
}

// EachWord gives the words the words analyzer makes of a name, for any
// name (the fast path's and the analyzer's).
func FuzzEachWord(f *testing.F) {
	for _, s := range []string{"Ka-Ren Kitoda", "O'Neil", "a.b", "ÆSIR x", "a1 b2-c3", "", "KARI kari", "İlkay Straße", "日本語 名前"} {
		f.Add(s)
	}
	ds := testDocuments(f)
	f.Fuzz(func(t *testing.T, name string) {
		var want, got []string
		for _, tok := range ds.words.Analyze([]byte(name)) {
			want = append(want, string(tok.Term))
		}
		if err := EachWord([]byte(name), func(w []byte) bool { got = append(got, string(w)); return true }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: EachWord %q, the analyzer %q", name, got, want)
		}
	})
}
