package indexer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/numeric"

	"gds/indexer/nametable"
	"gds/snapshots"
	"gds/snapshots/reinforce"
)

// The value columns hold, for every numeric and date value, the very
// int64 bleve's field indexes (the term its range searcher compares), and
// leave out what bleve leaves out.
func FuzzTermValue(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), -0.5, 0.45, 1e300, -1e-300, math.Inf(1), 1.2e9, -1e10, 1e12, 9.3e9, -9.3e9} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		num, _ := numeric.PrefixCoded(bdoc.NewNumericFieldWithIndexingOptions("n", nil, v, attributeOptions).Value()).Int64()
		if got, ok := TermValue(Numeric, v); !ok || got != num {
			t.Errorf("number %v: column %d, bleve %d", v, got, num)
		}
		if math.IsNaN(v) || math.Abs(v) > 1e15 {
			return
		}
		dt, err := bdoc.NewDateTimeFieldWithIndexingOptions("d", nil, time.Unix(int64(v), 0).UTC(), time.RFC3339, attributeOptions)
		got, ok := TermValue(DateTime, v)
		if (err == nil) != ok {
			t.Fatalf("date %v: column keeps %v, bleve's field error %v", v, ok, err)
		}
		if ok {
			want, _, _ := dt.DateTime()
			if got != want.UnixNano() {
				t.Errorf("date %v: column %d, bleve %d", v, got, want.UnixNano())
			}
		}
	})
}

// columnValues gives exactly the numeric and date values attributes gives
// the documents, for records of every kind with such fields.
func TestColumnValuesMatchAttributes(t *testing.T) {
	day := time.Date(2020, 3, 4, 5, 6, 7, 0, time.UTC)
	recs := []snapshots.Record{
		&snapshots.Character{Birthday: &day}, &snapshots.Character{},
		&snapshots.Corporation{MemberCount: 12}, &snapshots.Corporation{},
		&snapshots.Structure{ReinforceWeekday: 3, ReinforceHour: 19, FuelExpires: &day,
			Services: []snapshots.Service{{Name: "a", State: reinforce.ServiceOnline}, {Name: "b", State: "offline"}}},
		&snapshots.Structure{},
		&snapshots.SolarSystem{SecurityStatus: -0.3}, &snapshots.Agent{Level: 4}, &snapshots.Agent{},
		&snapshots.Type{Published: true}, &snapshots.Station{StationDetails: snapshots.StationDetails{SystemID: 1}},
	}
	for _, rec := range recs {
		type kv struct {
			f uint8
			v float64
		}
		var want, got []kv
		for _, a := range attributes(rec, nil) {
			if ft := attributeFields[a.field].Type; ft == Numeric || ft == DateTime {
				want = append(want, kv{a.field, a.num})
			}
		}
		columnValues(rec, func(f uint8, v float64) { got = append(got, kv{f, v}) })
		if len(got) != len(want) {
			t.Fatalf("%T: columns %v, attributes %v", rec, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%T: columns %v, attributes %v", rec, got, want)
			}
		}
	}
}

// rankOrdinals gives each entry the ordinal nametable.Write gives it, for
// entries in ascending ID (the counting sort) and in any order.
func TestRankOrdinals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ascending := range []bool{true, false} {
		var entries []nametable.Entry
		for i := range 2000 {
			entries = append(entries, nametable.Entry{ID: int64(1000 + 3*i), Folded: string([]rune("aéßxyz")[:1+rng.IntN(6)])})
		}
		if !ascending {
			rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		}
		ord := nametable.RankOrdinals(entries)
		ids := make([]int64, len(entries))
		for i, e := range entries {
			ids[i] = e.ID
		}
		if err := nametable.Write(context.Background(), t.TempDir()+"/t.tbl", entries, nil, nil); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if entries[ord[i]].ID != id {
				t.Fatalf("ascending %v: entry %d (ID %d) ranked %d, Write put ID %d there", ascending, i, id, ord[i], entries[ord[i]].ID)
			}
		}
	}
}
