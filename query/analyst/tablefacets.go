package analyst

import (
	"cmp"
	"gds/indexer"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2/numeric"
)

// facets counts the matches by each of the plan's facet fields.
func (m *tableMatches) facets(now time.Time) []FacetResult {
	var out []FacetResult
	for _, f := range m.p.facets {
		out = append(out, m.facet(f, now))
	}
	return out
}

func (m *tableMatches) facet(f indexer.AnalystField, now time.Time) FacetResult {
	out := FacetResult{Field: f.Name, Type: f.Type, Buckets: []Bucket{}}
	var hits uint64
	for _, bm := range m.bms {
		hits += bm.GetCardinality()
	}
	withValue := 0
	switch f.Type {
	case indexer.Numeric, indexer.DateTime:
		type bucket struct {
			name   string
			lo, hi int64
		}
		var bs []bucket
		if f.Type == indexer.Numeric {
			for _, r := range numericRanges[f.Name] {
				lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
				if !math.IsInf(r.min, 0) {
					lo = numeric.Float64ToInt64(r.min)
				}
				if !math.IsInf(r.max, 0) {
					hi = numeric.Float64ToInt64(r.max) - 1
				}
				bs = append(bs, bucket{r.name, lo, hi})
			}
		} else {
			for _, r := range dateRanges(f.Name, now) {
				lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
				if !r.start.IsZero() {
					lo = r.start.UnixNano()
				}
				if !r.end.IsZero() {
					hi = r.end.UnixNano() - 1
				}
				bs = append(bs, bucket{r.name, lo, hi})
			}
		}
		counts := make([]int, len(bs))
		for v, bm := range m.bms {
			tv := m.views[v]
			if tv.cols == nil || !tv.cols.Has(f.Name) {
				continue
			}
			if bm.GetCardinality()*recordsPerScan < uint64(tv.cols.Count(f.Name)) {
				// Few matches: bucket their values.
				m.valuesOf(v, f.Name, bm, func(_ uint32, val int64) {
					withValue++
					for k, b := range bs {
						if b.lo <= val && val <= b.hi {
							counts[k]++
						}
					}
				})
				continue
			}
			for k, b := range bs { // a slice of the column a bucket
				counts[k] += int(bm.AndCardinality(tv.cols.Bitmap(f.Name, b.lo, b.hi)))
			}
			withValue += int(bm.AndCardinality(tv.cols.Bitmap(f.Name, math.MinInt64, math.MaxInt64)))
		}
		for k, b := range bs {
			out.Buckets = append(out.Buckets, Bucket{Term: b.name, Count: counts[k]})
		}
		counted := 0
		for _, b := range out.Buckets {
			counted += b.Count
		}
		out.Total, out.Other = withValue, withValue-counted
	default:
		counts := map[int64]int{}
		for v, bm := range m.bms {
			if !m.g.KeywordColumn(f.Name, m.views[v].cat) {
				continue
			}
			m.valuesOf(v, f.Name, bm, func(_ uint32, val int64) {
				counts[val]++
				withValue++
			})
		}
		terms := make([]Bucket, 0, len(counts))
		for v, n := range counts {
			terms = append(terms, Bucket{Term: strconv.FormatInt(v, 10), Count: n})
		}
		sortBuckets(terms)
		top := terms[:min(len(terms), m.p.facetMax)]
		out.Buckets = append(out.Buckets, top...)
		counted := 0
		for _, b := range top {
			counted += b.Count
		}
		out.Total, out.Other = withValue, withValue-counted
	}
	out.Missing = int(hits) - withValue
	return out
}

// sortBuckets orders terms as bleve's terms facet does: most first, then
// by term.
func sortBuckets(bs []Bucket) {
	slices.SortFunc(bs, func(a, b Bucket) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Term, b.Term)
	})
}
