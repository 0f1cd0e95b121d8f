package analyst

import (
	"math"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"gds/indexer"
)

// numRange is one bucket of a numeric facet: [min, max).
type numRange struct {
	name     string
	min, max float64 // ±Inf: open
}

// numericRanges are the buckets of each numeric field's facet.
var numericRanges = map[string][]numRange{
	"member_count":      {{"0", math.Inf(-1), 1}, {"1", 1, 2}, {"2-9", 2, 10}, {"10-99", 10, 100}, {"100-999", 100, 1000}, {"1000+", 1000, math.Inf(1)}},
	"reinforce_weekday": steps(0, 7),
	"reinforce_hour":    steps(0, 24),
	"services_online":   {{"0", math.Inf(-1), 1}, {"1", 1, 2}, {"2-4", 2, 5}, {"5+", 5, math.Inf(1)}},
	// The game rounds security to one decimal: 0.0 and below is null-sec,
	// 0.1 to 0.4 low-sec, 0.5 and above high-sec.
	"security": {{"null (<0.05)", math.Inf(-1), 0.05}, {"low (0.05-0.45)", 0.05, 0.45}, {"high (>=0.45)", 0.45, math.Inf(1)}},
	"level":    steps(1, 6),
}

// steps is one bucket per integer from lo to hi-1.
func steps(lo, hi int) []numRange {
	var rs []numRange
	for i := lo; i < hi; i++ {
		rs = append(rs, numRange{strconv.Itoa(i), float64(i), float64(i + 1)})
	}
	return rs
}

// dateRange is one bucket of a date facet: [start, end); zero is open.
type dateRange struct {
	name       string
	start, end time.Time
}

// dateRanges returns the buckets of a date field's facet at now: a year
// each for birthdays (from the game's 2003), and how soon fuel runs out.
func dateRanges(field string, now time.Time) []dateRange {
	switch field {
	case "fuel_expires":
		return []dateRange{
			{"expired", time.Time{}, now},
			{"within 1 day", now, now.Add(24 * time.Hour)},
			{"1-7 days", now.Add(24 * time.Hour), now.Add(7 * 24 * time.Hour)},
			{"7-30 days", now.Add(7 * 24 * time.Hour), now.Add(30 * 24 * time.Hour)},
			{"30+ days", now.Add(30 * 24 * time.Hour), time.Time{}},
		}
	}
	year := func(y int) time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	rs := []dateRange{{"before 2003", time.Time{}, year(2003)}}
	for y := 2003; y <= now.Year(); y++ {
		rs = append(rs, dateRange{strconv.Itoa(y), year(y), year(y + 1)})
	}
	return append(rs, dateRange{"later", year(now.Year() + 1), time.Time{}})
}

// facetRequest is bleve's facet of field f: terms for keywords, f's fixed ranges for numbers and instants.
func facetRequest(f indexer.AnalystField, size int, now time.Time) *bleve.FacetRequest {
	switch f.Type {
	case indexer.Numeric:
		rs := numericRanges[f.Name]
		fr := bleve.NewFacetRequest(f.Name, len(rs))
		for _, r := range rs {
			var lo, hi *float64
			if !math.IsInf(r.min, 0) {
				lo = &r.min
			}
			if !math.IsInf(r.max, 0) {
				hi = &r.max
			}
			fr.AddNumericRange(r.name, lo, hi)
		}
		return fr
	case indexer.DateTime:
		rs := dateRanges(f.Name, now)
		fr := bleve.NewFacetRequest(f.Name, len(rs))
		for _, r := range rs {
			fr.AddDateTimeRange(r.name, r.start, r.end)
		}
		return fr
	}
	return bleve.NewFacetRequest(f.Name, size)
}

// facetResult turns bleve's facet into buckets: ranges in their fixed
// order, empty ones too (so a chart's axis stays put); terms by count.
func facetResult(f indexer.AnalystField, r *search.FacetResult) FacetResult {
	out := FacetResult{Field: f.Name, Type: f.Type, Buckets: []Bucket{}}
	if r == nil {
		return out
	}
	out.Total, out.Missing, out.Other = r.Total, r.Missing, r.Other
	counts := map[string]int{}
	for _, nr := range r.NumericRanges {
		counts[nr.Name] += nr.Count
	}
	for _, dr := range r.DateRanges {
		counts[dr.Name] += dr.Count
	}
	switch f.Type {
	case indexer.Numeric:
		for _, nr := range numericRanges[f.Name] {
			out.Buckets = append(out.Buckets, Bucket{Term: nr.name, Count: counts[nr.name]})
		}
	case indexer.DateTime:
		// The names are the same whatever the clock; the bounds do not matter here.
		for _, dr := range dateRanges(f.Name, time.Now()) {
			out.Buckets = append(out.Buckets, Bucket{Term: dr.name, Count: counts[dr.name]})
		}
	default:
		if r.Terms != nil {
			for _, t := range r.Terms.Terms() {
				out.Buckets = append(out.Buckets, Bucket{Term: t.Term, Count: t.Count})
			}
		}
	}
	return out
}
