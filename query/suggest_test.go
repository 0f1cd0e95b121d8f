package query_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

func corp(id int64, name, ticker string) snapshots.Record {
	return &snapshots.Corporation{Entity: indexertest.Named(id, name), Ticker: ticker, MemberCount: 1}
}

func suggestFixture(t *testing.T) *query.Searcher {
	t.Helper()
	recs := indexertest.Records{
		snapshots.Characters: {
			char(90000001, "Jita Trader"),
			char(90000002, "Kari Trader"),
			char(90000003, "Mr Jita"),
			char(90000004, "Tajita"),
			char(90000005, "Jita"),
			char(90000006, "Catherine Velkaro"),
		},
		snapshots.Corporations: {
			corp(98000001, "Kari Industries", "KARI"),
			corp(98000002, "Jita Holdings", "-J-"),
		},
		snapshots.SolarSystems: {system(30000142, "Jita")},
		snapshots.Types: {
			typ(34, snapshots.Localized{"en": "Tritanium", "de": "Tritanium", "ja": "トリタニウム"}),
			typ(35, snapshots.Localized{"en": "Pyerite", "de": "Pyerit"}),
		},
	}
	return query.New(indexertest.Manager(t, indexertest.Snapshot(t, recs)))
}

func suggest(t *testing.T, s *query.Searcher, req query.SuggestRequest) []query.Suggestion {
	t.Helper()
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	res, err := v.Suggest(context.Background(), req)
	if err != nil {
		t.Fatalf("suggest %+v: %v", req, err)
	}
	return res.Suggestions
}

func TestSuggestRanksMatchKinds(t *testing.T) {
	s := suggestFixture(t)
	all := []snapshots.Category{snapshots.CategoryCharacter, snapshots.CategoryCorporation,
		snapshots.CategorySolarSystem, snapshots.CategoryInventoryType}
	type sg = query.Suggestion
	cases := []struct {
		name string
		req  query.SuggestRequest
		want []sg
	}{
		{"exact, prefix, word, contains; shorter names first, then the request's order of categories",
			query.SuggestRequest{Text: "jita", Categories: all},
			[]sg{{"character", 90000005, "Jita", "exact"}, {"solar_system", 30000142, "Jita", "exact"},
				{"character", 90000001, "Jita Trader", "prefix"}, {"corporation", 98000002, "Jita Holdings", "prefix"},
				{"character", 90000003, "Mr Jita", "word"}, {"character", 90000004, "Tajita", "contains"}}},
		{"a ticker in any case, after exact names",
			query.SuggestRequest{Text: "kari", Categories: all},
			[]sg{{"corporation", 98000001, "Kari Industries", "ticker"}, {"character", 90000002, "Kari Trader", "prefix"}}},
		{"a ticker of two runes", query.SuggestRequest{Text: "-j-", Categories: all},
			[]sg{{"corporation", 98000002, "Jita Holdings", "ticker"}}},
		{"a typo", query.SuggestRequest{Text: "tritanuim", Categories: all},
			[]sg{{"inventory_type", 34, "Tritanium", "typo"}}},
		{"a typo in a word of a name", query.SuggestRequest{Text: "catherine velakro", Categories: all},
			[]sg{{"character", 90000006, "Catherine Velkaro", "typo"}}},
		{"a typo in a localized name answers in the language", query.SuggestRequest{Text: "pyreit", Language: "de", Categories: all},
			[]sg{{"inventory_type", 35, "Pyerit", "typo"}}},
		{"the limit", query.SuggestRequest{Text: "jita", Categories: all, Limit: 2},
			[]sg{{"character", 90000005, "Jita", "exact"}, {"solar_system", 30000142, "Jita", "exact"}}},
		{"nothing", query.SuggestRequest{Text: "zzzzzz", Categories: all}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := suggest(t, s, c.req); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestSuggestRefusesOneRune(t *testing.T) {
	s := suggestFixture(t)
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Suggest(context.Background(), query.SuggestRequest{Text: " j ", Categories: []snapshots.Category{"character"}}); !errors.Is(err, query.ErrTextTooShort) {
		t.Fatalf("one rune: %v", err)
	}
}
