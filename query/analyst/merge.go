package analyst

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"gds/indexer"
	"gds/query"
	"gds/snapshots"
)

// queryTables answers p over the categories tables answers from their
// tables (see analysttables.go) and, when others is not empty, the other
// categories from bleve: each side's first hits, merged in p's order, the
// totals added and the facets' counts summed.
func queryTables(ctx context.Context, g *indexer.Generation, p *plan, tables, others []snapshots.Category, res *Result) error {
	now := time.Now()
	tm, err := matchTables(ctx, g, p, tables)
	if err != nil {
		return err
	}
	hits, err := tm.first(p.limit)
	if err != nil {
		return err
	}
	res.Total = tm.total
	res.Hits = hits
	res.Facets = tm.facets(now)
	idx, err := categoryIndexes(g, others)
	if err != nil || idx == nil {
		return err
	}
	out, err := bleveSearch(ctx, g, p, idx)
	if err != nil {
		return err
	}
	res.Total += out.Total
	var bhits []Hit
	for _, h := range out.Hits {
		hit, err := hitOf(g, h.ID, h.Index, h.Score, p.fields)
		if err != nil {
			return err
		}
		bhits = append(bhits, hit)
	}
	keys := orderKeys(p)
	if len(keys) == 0 {
		// No order to keep: bleve's index order, then the tables'.
		res.Hits = append(bhits, res.Hits...)[:min(len(bhits)+len(res.Hits), p.limit)]
	} else {
		order := newHitOrder(g, keys)
		res.Hits = order.merge(bhits, res.Hits, p.limit)
	}
	for i, f := range p.facets {
		res.Facets[i] = mergeFacets(res.Facets[i], facetResult(f, out.Facets[f.Name]), p.facetMax)
	}
	return nil
}

// hitOrder compares answers of different categories by a plan's sort
// keys, reading each hit's sort values from its record (as fields= does).
type hitOrder struct {
	g    *indexer.Generation
	keys []sortKey
	vals map[*Hit][]any
}

func newHitOrder(g *indexer.Generation, keys []sortKey) *hitOrder {
	return &hitOrder{g: g, keys: keys, vals: map[*Hit][]any{}}
}

// values are h's sort values: nil where it has none.
func (o *hitOrder) values(h *Hit) []any {
	if v, ok := o.vals[h]; ok {
		return v
	}
	var names []string
	for _, k := range o.keys {
		names = append(names, k.field)
	}
	var fields map[string]any
	if rec, err := query.RecordOf(o.g, h.Category.Kind(), h.ID); err == nil {
		fields = o.g.FieldValues(rec, names)
	}
	v := make([]any, len(o.keys))
	for i, k := range o.keys {
		switch k.field {
		case "_score":
			v[i] = h.Score
		case indexer.DocIDField:
			v[i] = strconv.FormatInt(h.ID, 10)
		default:
			v[i] = fields[k.field]
			if many, ok := v[i].([]any); ok && len(many) > 0 {
				v[i] = many[0]
			}
		}
	}
	o.vals[h] = v
	return v
}

// compare orders x and y: by each key (a value before none), then by ID.
func (o *hitOrder) compare(x, y *Hit) int {
	vx, vy := o.values(x), o.values(y)
	for i, k := range o.keys {
		a, b := vx[i], vy[i]
		if (a == nil) != (b == nil) {
			if a == nil {
				return 1
			}
			return -1
		}
		var c int
		switch a := a.(type) {
		case float64:
			if b, ok := b.(float64); ok {
				c = cmp.Compare(a, b)
			}
		case string:
			if b, ok := b.(string); ok {
				c = strings.Compare(a, b)
			}
		}
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	if c := cmp.Compare(x.ID, y.ID); c != 0 {
		return c
	}
	return strings.Compare(string(x.Category), string(y.Category))
}

// merge merges two lists, each in order, into the first limit.
func (o *hitOrder) merge(a, b []Hit, limit int) []Hit {
	out := make([]Hit, 0, min(len(a)+len(b), limit))
	for len(out) < limit && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || len(a) > 0 && o.compare(&a[0], &b[0]) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// mergeFacets adds two counts of one field over different documents:
// ranges bucket by bucket, terms by term (the most first, at most size).
func mergeFacets(a, b FacetResult, size int) FacetResult {
	out := FacetResult{Field: a.Field, Type: a.Type, Total: a.Total + b.Total, Missing: a.Missing + b.Missing, Buckets: []Bucket{}}
	if a.Type == indexer.Numeric || a.Type == indexer.DateTime {
		for i, bk := range a.Buckets {
			if i < len(b.Buckets) {
				bk.Count += b.Buckets[i].Count
			}
			out.Buckets = append(out.Buckets, bk)
		}
		out.Other = a.Other + b.Other
		return out
	}
	counts := map[string]int{}
	for _, bk := range slices.Concat(a.Buckets, b.Buckets) {
		counts[bk.Term] += bk.Count
	}
	terms := make([]Bucket, 0, len(counts))
	for t, n := range counts {
		terms = append(terms, Bucket{Term: t, Count: n})
	}
	sortBuckets(terms)
	out.Buckets = append(out.Buckets, terms[:min(len(terms), size)]...)
	counted := 0
	for _, bk := range out.Buckets {
		counted += bk.Count
	}
	out.Other = out.Total - counted
	return out
}

// exportTables streams an export of p over the categories tables answers
// from their tables, merged in order with the bleve export of the others
// (exportBleve).
func exportTables(ctx context.Context, g *indexer.Generation, p *plan, tables, others []snapshots.Category, req Request,
	start func(total uint64, columns []string) error, row func(Hit) error) error {
	order := append(slices.Clone(p.sort), indexer.DocIDField)
	sorted := *p
	sorted.sort = order
	sorted.unscored = p.unscored && !slices.ContainsFunc(order, func(k string) bool { return strings.TrimPrefix(k, "-") == "_score" })
	tm, err := matchTables(ctx, g, &sorted, tables)
	if err != nil {
		return err
	}
	idx, err := categoryIndexes(g, others)
	if err != nil {
		return err
	}
	begin := func(total uint64) error {
		if req.Limit == 0 && total > uint64(exportCap) {
			return &ExportTooLargeError{Total: total, Cap: exportCap}
		}
		return start(total, p.fields)
	}
	if tm.total > uint64(exportCap) && req.Limit == 0 {
		return wrapBad(&ExportTooLargeError{Total: tm.total, Cap: exportCap})
	}
	hits, err := tm.first(p.limit)
	if err != nil {
		return err
	}
	sent := 0
	emit := func(h Hit) error {
		if sent >= p.limit {
			return errExportDone
		}
		sent++
		return row(h)
	}
	if idx == nil {
		if err := begin(tm.total); err != nil {
			return wrapBad(err)
		}
		for _, h := range hits {
			if err := emit(h); err != nil {
				return ignoreDone(err)
			}
		}
		return nil
	}
	ord := newHitOrder(g, sortKeys(order))
	err = exportBleve(ctx, g, p, idx, func(total uint64) error {
		if err := begin(total + tm.total); err != nil {
			return wrapBad(err)
		}
		return nil
	}, func(h Hit) error {
		for len(hits) > 0 && ord.compare(&hits[0], &h) <= 0 {
			if err := emit(hits[0]); err != nil {
				return err
			}
			ord.forget(&hits[0])
			hits = hits[1:]
		}
		ord.forget(&h)
		return emit(h)
	})
	if err != nil {
		return ignoreDone(err)
	}
	for _, h := range hits {
		if err := emit(h); err != nil {
			return ignoreDone(err)
		}
	}
	return nil
}

// forget drops h's cached values (exports compare each hit once or twice).
func (o *hitOrder) forget(h *Hit) { delete(o.vals, h) }
