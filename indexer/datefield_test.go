package indexer

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	bquery "github.com/blevesearch/bleve/v2/search/query"
)

// Every instant in a range is in exactly one run of splitDateRange and
// none outside it is in any: ranges and values on and beside the buckets'
// edges at every shift, the int64's ends, empty and one-value ranges.
func TestSplitDateRangeCoversExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	near := func() int64 {
		switch rng.IntN(5) {
		case 0:
			return []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64}[rng.IntN(7)]
		case 1: // on or beside an edge of a bucket
			s := DateShifts[rng.IntN(len(DateShifts))]
			return int64(sortable(rng.Int64())>>s<<s^1<<63) + int64(rng.IntN(3)) - 1
		case 2:
			return rng.Int64() - rng.Int64()
		default: // instants of the last decades, in nanoseconds
			return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano() + rng.Int64N(int64(30*365*24*time.Hour))
		}
	}
	for range 3000 {
		lo, hi := near(), near()
		if rng.IntN(10) == 0 {
			hi = lo
		}
		runs := splitDateRange(lo, hi)
		for range 200 {
			v := near()
			if rng.IntN(4) == 0 {
				v = []int64{lo, hi, lo - 1, hi + 1}[rng.IntN(4)]
			}
			in := 0
			for _, r := range runs {
				if b := sortable(v) >> r.shift; r.lo <= b && b <= r.hi {
					in++
				}
			}
			if want := lo <= v && v <= hi; in != map[bool]int{true: 1, false: 0}[want] {
				t.Fatalf("range %d..%d (runs %v): %d is in %d runs", lo, hi, runs, v, in)
			}
		}
	}
}

// DateRangeTerms finds, in a shard the builder wrote and in one bleve's
// own date fields wrote (every fourth shift, as generations before
// FieldsVersion 4 hold), exactly the documents whose instant is in the
// range.
func TestDateRangeTermsFindEveryInstant(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	base := time.Date(2003, 5, 6, 0, 0, 0, 0, time.UTC)
	var docs []docInfo
	births := map[string]time.Time{}
	for i := range 600 {
		// Clustered to the second and spread over decades: runs at every shift.
		b := base.Add(time.Duration(rng.Int64N(int64(20 * 365 * 24 * time.Hour)))).Truncate(time.Second)
		if i%3 == 0 {
			b = base.Add(time.Duration(rng.IntN(7200)) * time.Second)
		}
		d := newDoc(int64(90000000+i), "Kari "+strconv.Itoa(i), docMore{attrs: []attr{{field: attrBirthday, num: float64(b.Unix())}}})
		docs = append(docs, d)
		births[strconv.FormatInt(d.id, 10)] = b
	}
	ds := testDocuments(t)
	dir := filepath.Join(t.TempDir(), "shard")
	bd := &builder{ctx: context.Background(), opts: Options{BatchSize: 100, ShardSize: 1_000_000}, docs: ds}
	if err := writeShard(bd, dir, docs); err != nil {
		t.Fatal(err)
	}
	ours, err := bleve.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	theirs, err := bleve.NewMemOnly(testMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	for id, b := range births {
		if err := theirs.Index(id, map[string]any{"birthday": b}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		lo := births[strconv.Itoa(90000000+rng.IntN(len(docs)))].Add(time.Duration(rng.IntN(3)-1) * time.Second)
		hi := lo.Add(time.Duration(rng.Int64N(int64([]time.Duration{time.Minute, 30 * time.Hour, 200 * 24 * time.Hour, 30 * 365 * 24 * time.Hour}[i%4]))))
		var want []string
		for id, b := range births {
			if !b.Before(lo) && !b.After(hi) {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		for name, idx := range map[string]bleve.Index{"builder's": ours, "bleve's": theirs} {
			if got := searchDateRange(t, idx, lo.UnixNano(), hi.UnixNano()); !slices.Equal(got, want) {
				t.Fatalf("%s shard, %s..%s: %d documents, want %d", name, lo, hi, len(got), len(want))
			}
		}
	}
}

// searchDateRange returns the IDs of idx's documents holding a term
// DateRangeTerms finds for lo..hi.
func searchDateRange(t *testing.T, idx bleve.Index, lo, hi int64) []string {
	t.Helper()
	r, err := idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	reader, err := r.Reader()
	if err != nil {
		t.Fatal(err)
	}
	terms, err := DateRangeTerms(reader, "birthday", lo, hi)
	reader.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(terms) == 0 {
		return nil
	}
	var qs []bquery.Query
	for _, term := range terms {
		q := bleve.NewTermQuery(string(term))
		q.SetField("birthday")
		qs = append(qs, q)
	}
	res, err := idx.Search(bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), 10000, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	return ids
}
