package analyst

import (
	"context"
	"math"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/search"
	bquery "github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"

	"gds/indexer"
)

// Ranges of numeric and date fields (member_count:>=100,
// birthday:>="2020-01-01") are answered from the value columns the build
// writes beside each table (indexer/valuecol): the values sorted with
// each document's table ordinal, so a range is a slice found by binary
// search and its ordinals a bitmap, where bleve's range searcher visits
// every matching document (8.5 million for a birthday range over 10M
// characters). The bounds are computed as bleve computes them, down to the
// int64 its terms encode, so both select the same documents; a range
// bleve would refuse (an instant beyond what it represents, no bound at
// all) is left to bleve, which says why.

// valueRange is one range clause: the field and the inclusive bounds on
// the int64s bleve indexes (indexer.TermValue).
type valueRange struct {
	field  string
	lo, hi int64
}

// rangeOf returns the range q selects, as bleve's numeric range searcher
// computes it (NewNumericRangeSearcher, DateRangeQuery.parseEndpoints),
// or false when the value columns do not answer q: a field that is not
// numeric or a date, or a query bleve would refuse.
func rangeOf(q bquery.Query) (valueRange, bool) {
	var (
		field          string
		min, max       *float64
		incMin, incMax *bool
	)
	switch c := q.(type) {
	case *bquery.NumericRangeQuery:
		if c.Min == nil && c.Max == nil {
			return valueRange{}, false
		}
		field, min, max, incMin, incMax = c.FieldVal, c.Min, c.Max, c.InclusiveMin, c.InclusiveMax
	case *bquery.DateRangeQuery:
		if c.Start.IsZero() && c.End.IsZero() {
			return valueRange{}, false
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		for _, e := range []struct {
			t   bquery.BleveQueryTime
			out *float64
		}{{c.Start, &lo}, {c.End, &hi}} {
			if e.t.IsZero() {
				continue
			}
			if bquery.QueryDateTimeFormat != time.RFC3339 || e.t.Before(bquery.MinRFC3339CompatibleTime) || e.t.After(bquery.MaxRFC3339CompatibleTime) {
				return valueRange{}, false // bleve refuses it
			}
			*e.out = numeric.Int64ToFloat64(e.t.UnixNano())
		}
		field, min, max, incMin, incMax = c.FieldVal, &lo, &hi, c.InclusiveStart, c.InclusiveEnd
	default:
		return valueRange{}, false
	}
	if f, ok := fieldNamed(field); !ok || (f.Type != indexer.Numeric && f.Type != indexer.DateTime) {
		return valueRange{}, false
	}
	// NewNumericRangeSearcher's defaults and bounds.
	if min == nil {
		inf := math.Inf(-1)
		min = &inf
	}
	if max == nil {
		inf := math.Inf(1)
		max = &inf
	}
	r := valueRange{field: field, lo: numeric.Float64ToInt64(*min), hi: numeric.Float64ToInt64(*max)}
	if incMin != nil && !*incMin && r.lo != math.MaxInt64 {
		r.lo++
	}
	if (incMax == nil || !*incMax) && r.hi != math.MinInt64 {
		r.hi--
	}
	return r, true
}

// valueRange returns the ordinals tv shows whose value of r's field is in
// r (none when its category has no such field).
func (tv tableView) valueRange(r valueRange) *roaring.Bitmap {
	if !indexer.ColumnField(r.field, tv.cat) {
		return roaring.New()
	}
	bm := tv.cols.Bitmap(r.field, r.lo, r.hi)
	if tv.hide != nil {
		bm.AndNot(tv.hide)
	}
	return bm
}

// dateRangeQuery is a range of an instant field that bleve answers (with
// other clauses) over the terms the analysts' documents hold for instants
// (indexer.DateShifts): bleve's own range searcher would look for terms
// at every fourth shift, which they no longer hold.
type dateRangeQuery struct {
	r     valueRange
	boost float64
}

func (q *dateRangeQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opts search.SearcherOptions) (search.Searcher, error) {
	terms, err := indexer.DateRangeTerms(r, q.r.field, q.r.lo, q.r.hi)
	if err != nil {
		return nil, err
	}
	// Never a MatchNoneSearcher, even without terms, as bleve's range
	// searcher: a query string's conjunction skips those.
	return searcher.NewMultiTermSearcherBytes(ctx, r, terms, q.r.field, q.boost, opts, true)
}

// instantRanges replaces each range of an instant field in q, numeric or
// date, by a dateRangeQuery of the same bounds; the ranges bleve would
// refuse stay, for bleve to say why.
func instantRanges(q bquery.Query) bquery.Query {
	if rewriteChildren(q, instantRanges) {
		return q
	}
	var boost float64
	switch c := q.(type) {
	case *bquery.DateRangeQuery:
		boost = c.BoostVal.Value()
	case *bquery.NumericRangeQuery:
		boost = c.BoostVal.Value()
	default:
		return q
	}
	r, ok := rangeOf(q)
	if f, known := fieldNamed(r.field); !ok || !known || f.Type != indexer.DateTime {
		return q
	}
	return &dateRangeQuery{r: r, boost: boost}
}
