package query_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

func char(id int64, name string) snapshots.Record {
	return &snapshots.Character{Entity: indexertest.Named(id, name), CorporationID: 98000001}
}

func system(id int64, name string) snapshots.Record {
	return &snapshots.SolarSystem{Entity: indexertest.Named(id, name), ConstellationID: 20000020}
}

func typ(id int64, names snapshots.Localized) snapshots.Record {
	return &snapshots.Type{Entity: snapshots.Entity{ID: id, Name: names["en"], Names: names}, GroupID: 18}
}

func structure(id int64, name string, access ...int64) snapshots.Record {
	return &snapshots.Structure{ID: id, Name: name, TypeID: 35832, CorporationID: 98000001, SystemID: 30000142,
		State: "shield_vulnerable", Access: access}
}

// fixture is a small universe with the names the rules talk about.
func fixture(t *testing.T) *query.Searcher {
	t.Helper()
	recs := indexertest.Records{
		snapshots.Characters: {
			char(90000001, "Ita Juu"),
			char(90000002, "Jita Trader"),
			char(90000003, "jita"),
			char(90000004, "Mr Jita"),
			char(90000005, "JITA"),
			char(90000006, "Ji Ta"),
			char(90000007, "Jitajita"),
			char(90000008, "Σίσυφος"), // final sigma
			char(90000009, "ΣΊΣΥΦΟΣ"),
			char(90000010, "İstanbul Pilot"), // Turkish dotted capital I
			char(90000011, "Kaori O'mally"),
			char(90000012, "Ka-Ren Sisko"),
			char(90000013, "Straße Läufer"),
		},
		snapshots.SolarSystems: {
			system(30000142, "Jita"),
			system(30000144, "Perimeter"),
			system(30002187, "Amarr"),
		},
		snapshots.Types: {
			typ(34, snapshots.Localized{"en": "Tritanium", "de": "Tritanium", "ja": "トリタニウム", "ru": "Тританий", "zh": "三钛合金"}),
			typ(587, snapshots.Localized{"en": "Rifter", "de": "Rifter", "fr": "Rifter", "ja": "リフター"}),
			typ(35, snapshots.Localized{"en": "Pyerite", "de": "Pyerit", "ja": "パイライト"}),
		},
		snapshots.Structures: {
			structure(1000000000001, "Jita - Freeport", 90000001, 90000002),
			structure(1000000000002, "Jita - Private Keep", 90000002),
			structure(1000000000003, "Perimeter - Market", 90000003),
		},
	}
	return query.New(indexertest.Manager(t, indexertest.Snapshot(t, recs)))
}

func search(t *testing.T, s *query.Searcher, req query.Request) map[snapshots.Category][]int64 {
	t.Helper()
	res, err := s.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %+v: %v", req, err)
	}
	return res.IDs
}

func TestSearchRules(t *testing.T) {
	s := fixture(t)
	chars := []snapshots.Category{snapshots.CategoryCharacter}
	cases := []struct {
		name string
		req  query.Request
		want map[snapshots.Category][]int64
	}{
		{"contains ranks exact, then prefix, then the rest, shorter first then ID",
			query.Request{Text: "jita", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000003, 90000005, 90000007, 90000002, 90000004}}},
		{"contains across spaces", query.Request{Text: "a Ju", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000001}}},
		{"strict is whole-name equality, any case", query.Request{Text: "JiTa", Categories: chars, Strict: true},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000003, 90000005}}},
		{"strict does not match a contained name", query.Request{Text: "Jita Trade", Categories: chars, Strict: true}, nil},
		{"Greek final sigma folds like sigma", query.Request{Text: "σίσυφοσ", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000008, 90000009}}},
		{"Greek upper case matches lower case with final sigma", query.Request{Text: "ΣΊΣΥΦΟΣ", Categories: chars, Strict: true},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000008, 90000009}}},
		{"Turkish dotted I folds the same at index and query time", query.Request{Text: "İSTANBUL", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000010}}},
		{"plain letters find the Turkish dotted capital I", query.Request{Text: "istanbul", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000010}}},
		{"Turkish dotted I, strict, in plain upper case", query.Request{Text: "ISTANBUL PILOT", Categories: chars, Strict: true},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000010}}},
		{"sharp s folds to ss", query.Request{Text: "STRASSE", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000013}}},
		{"apostrophe inside a name", query.Request{Text: "O'm", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000011}}},
		{"hyphen at the start of the text", query.Request{Text: "-Re", Categories: chars},
			map[snapshots.Category][]int64{snapshots.CategoryCharacter: {90000012}}},
		{"several categories; only those with matches", query.Request{Text: "jita",
			Categories: []snapshots.Category{snapshots.CategorySolarSystem, snapshots.CategoryInventoryType}},
			map[snapshots.Category][]int64{snapshots.CategorySolarSystem: {30000142}}},
		{"Japanese names in ja", query.Request{Text: "タニウ", Language: "ja", Categories: []snapshots.Category{snapshots.CategoryInventoryType}},
			map[snapshots.Category][]int64{snapshots.CategoryInventoryType: {34}}},
		{"Chinese names in zh", query.Request{Text: "三钛合", Language: "zh", Categories: []snapshots.Category{snapshots.CategoryInventoryType}},
			map[snapshots.Category][]int64{snapshots.CategoryInventoryType: {34}}},
		{"a language without a localization falls back to the name", query.Request{Text: "rifter", Language: "zh", Categories: []snapshots.Category{snapshots.CategoryInventoryType}},
			map[snapshots.Category][]int64{snapshots.CategoryInventoryType: {587}}},
		{"a localized name replaces the English one in that language", query.Request{Text: "pyerite", Language: "de", Categories: []snapshots.Category{snapshots.CategoryInventoryType}}, nil},
		{"German name in de", query.Request{Text: "pyerit", Language: "de", Categories: []snapshots.Category{snapshots.CategoryInventoryType}},
			map[snapshots.Category][]int64{snapshots.CategoryInventoryType: {35}}},
		{"en-us is en", query.Request{Text: "tritan", Language: "en-us", Categories: []snapshots.Category{snapshots.CategoryInventoryType}},
			map[snapshots.Category][]int64{snapshots.CategoryInventoryType: {34}}},
		{"Japanese text finds nothing in en", query.Request{Text: "タニウ", Categories: []snapshots.Category{snapshots.CategoryInventoryType}}, nil},
		{"structures only for characters on the access list", query.Request{Text: "jita", CharacterID: 90000001,
			Categories: []snapshots.Category{snapshots.CategoryStructure}},
			map[snapshots.Category][]int64{snapshots.CategoryStructure: {1000000000001}}},
		{"another character sees its own", query.Request{Text: "jita", CharacterID: 90000002,
			Categories: []snapshots.Category{snapshots.CategoryStructure}},
			map[snapshots.Category][]int64{snapshots.CategoryStructure: {1000000000001, 1000000000002}}},
		{"no structures without a character", query.Request{Text: "jita", Categories: []snapshots.Category{snapshots.CategoryStructure}}, nil},
		{"no structures for a character with no access", query.Request{Text: "jita", CharacterID: 90000013,
			Categories: []snapshots.Category{snapshots.CategoryStructure}}, nil},
		{"text trimmed", query.Request{Text: "  Perimeter  ", Strict: true, Categories: []snapshots.Category{snapshots.CategorySolarSystem}},
			map[snapshots.Category][]int64{snapshots.CategorySolarSystem: {30000144}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := search(t, s, c.req)
			if len(got) == 0 && len(c.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			// Identical requests give identical results.
			if again := search(t, s, c.req); !reflect.DeepEqual(again, got) {
				t.Fatalf("second run gave %v, first %v", again, got)
			}
		})
	}
}

func TestSearchTextTooShort(t *testing.T) {
	s := fixture(t)
	for _, text := range []string{"", "ji", "  ji  ", "日本"} {
		_, err := s.Search(context.Background(), query.Request{Text: text, Categories: []snapshots.Category{snapshots.CategoryCharacter}})
		if err != query.ErrTextTooShort {
			t.Errorf("%q: got %v, want ErrTextTooShort", text, err)
		}
	}
	// Three runes of multi-byte text are enough.
	if _, err := s.Search(context.Background(), query.Request{Text: "日本語", Categories: []snapshots.Category{snapshots.CategoryCharacter}}); err != nil {
		t.Errorf("three runes: %v", err)
	}
}

// TestSearchCapAndEarlyStop checks the 500 cap and order on a set where a
// common text matches far more names than are returned, and that the
// search stops early: it verifies about as many names as it returns rather
// than every match.
func TestSearchCapAndEarlyStop(t *testing.T) {
	var recs []snapshots.Record
	names := map[int64]string{}
	for i := 0; i < 20000; i++ {
		id := int64(90000000 + i)
		name := fmt.Sprintf("Pilot %d Ani", i*7919%20000)
		if i%3 == 0 {
			name = fmt.Sprintf("Ani%d Kor", i)
		}
		names[id] = name
		recs = append(recs, char(id, name))
	}
	m := indexertest.Manager(t, indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: recs}))
	s := query.New(m)
	res, err := s.Search(context.Background(), query.Request{Text: "ani", Categories: []snapshots.Category{snapshots.CategoryCharacter}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.IDs[snapshots.CategoryCharacter]
	if len(got) != query.MaxResults {
		t.Fatalf("got %d IDs, want %d", len(got), query.MaxResults)
	}
	// Expected: brute force over all names with the documented order.
	folded := map[int64]string{}
	for id, n := range names {
		folded[id] = strings.ToLower(n)
	}
	all := query.BruteRankedForTest(folded, "ani")
	for i := range got {
		if got[i] != all[i] {
			t.Fatalf("position %d: got %d, want %d", i, got[i], all[i])
		}
	}
	if res.Stats.Verified > 2*query.MaxResults {
		t.Fatalf("verified %d names for %d results: the search did not stop early (%d match)", res.Stats.Verified, len(got), len(all))
	}
	// A limit below the cap is honoured.
	res, _ = s.Search(context.Background(), query.Request{Text: "ani", Limit: 10, Categories: []snapshots.Category{snapshots.CategoryCharacter}})
	if n := len(res.IDs[snapshots.CategoryCharacter]); n != 10 {
		t.Fatalf("limit 10 gave %d", n)
	}
}

func TestNotReady(t *testing.T) {
	m, err := indexer.Open(indexer.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := query.New(m).Search(context.Background(), query.Request{Text: "jita"}); err != query.ErrNotReady {
		t.Fatalf("got %v, want ErrNotReady", err)
	}
}
