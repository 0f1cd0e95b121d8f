package analyst

import (
	"bytes"
	"cmp"
	"context"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/numeric"
	bquery "github.com/blevesearch/bleve/v2/search/query"

	"gds/indexer"
	"gds/query"
	"gds/snapshots"
)

// tableMatches is a query's matches in the categories a generation's
// tables answer: a bitmap per table view.
type tableMatches struct {
	ctx   context.Context
	g     *indexer.Generation
	p     *plan
	views []tableView
	qs    []*tableQuery
	bms   []*roaring.Bitmap
	total uint64
}

// tablesOnlyCategories splits cats into those g answers from its tables
// alone and the others.
func tablesOnlyCategories(g *indexer.Generation, cats []snapshots.Category) (tables, others []snapshots.Category) {
	for _, c := range cats {
		if g.TablesAnswer(c) {
			tables = append(tables, c)
		} else {
			others = append(others, c)
		}
	}
	return tables, others
}

// matchTables evaluates p's query over the tables of cats.
func matchTables(ctx context.Context, g *indexer.Generation, p *plan, cats []snapshots.Category) (*tableMatches, error) {
	m := &tableMatches{ctx: ctx, g: g, p: p, views: tableViews(g, cats)}
	for _, tv := range m.views {
		tq := newTableQuery(ctx, g, tv, g.Meta.Counts[tv.cat])
		bm, err := tq.eval(p.q)
		if err != nil {
			return nil, err
		}
		m.qs, m.bms = append(m.qs, tq), append(m.bms, bm)
		m.total += bm.GetCardinality()
	}
	return m, nil
}

// tableHit is one match: its view, ordinal, score and sort values.
type tableHit struct {
	view  int
	o     uint32
	score float64
	keys  []sortValue
}

// sortValue is a hit's value of one sort key: an integer (an ID, a
// column's value) or none.
type sortValue struct {
	v       int64
	missing bool
}

// sortKey is one key of a plan's sort, in bleve's spelling.
type sortKey struct {
	field string // _score, _id or a stored field
	desc  bool
	// keyword: its values order as text (IDs, keyword fields).
	keyword bool
}

// orderKeys is the order of p's hits: its sort (without scores when
// nothing scores), else best score first, else none (rank order).
func orderKeys(p *plan) []sortKey {
	keys := sortKeys(p.sort)
	if p.unscored { // every score is 0: no key
		return slices.DeleteFunc(keys, func(k sortKey) bool { return k.field == "_score" })
	}
	if len(keys) == 0 {
		keys = []sortKey{{field: "_score", desc: true}}
	}
	return keys
}

func sortKeys(sort []string) []sortKey {
	var out []sortKey
	for _, s := range sort {
		name, desc := strings.CutPrefix(s, "-")
		f, _ := fieldNamed(name)
		out = append(out, sortKey{field: name, desc: desc, keyword: name == indexer.DocIDField || f.Type == indexer.Keyword})
	}
	return out
}

// maxSortAll is the most matches whose sort values are all read to sort
// them; beyond it the first sort key picks the candidates (the first
// values of its column, the best scores, the first IDs).
var maxSortAll = 250000

// hits returns the first limit matches in the plan's order: its sort, or
// best score first, or rank order (shorter names, then lower IDs).
func (m *tableMatches) hits(limit int) ([]tableHit, error) {
	keys := orderKeys(m.p)
	scored := !m.p.unscored
	if len(keys) == 0 {
		return m.rankOrder(limit), nil
	}
	var cands []tableHit
	if m.total <= uint64(maxSortAll) {
		for v, bm := range m.bms {
			it := bm.Iterator()
			for it.HasNext() {
				cands = append(cands, tableHit{view: v, o: it.Next()})
			}
		}
	} else {
		cands = m.firstByKey(keys[0], limit)
	}
	if scored && (m.total <= uint64(maxSortAll) || keys[0].field != "_score") {
		for i := range cands {
			if i%65536 == 0 && m.ctx.Err() != nil {
				break
			}
			cands[i].score = m.qs[cands[i].view].scoreOf(m.p.q, cands[i].o)
		}
	}
	if err := m.ctx.Err(); err != nil { // scoring millions of matches takes seconds
		return nil, err
	}
	m.fillKeys(cands, keys)
	slices.SortFunc(cands, func(x, y tableHit) int { return m.compare(x, y, keys) })
	return cands[:min(len(cands), limit)], nil
}

// rankOrder is the first limit matches in rank order: each table's
// ordinals are, so its first limit are all that can be first overall.
func (m *tableMatches) rankOrder(limit int) []tableHit {
	var out []tableHit
	for v, bm := range m.bms {
		it := bm.Iterator()
		for k := 0; k < limit && it.HasNext(); k++ {
			out = append(out, tableHit{view: v, o: it.Next()})
		}
	}
	slices.SortFunc(out, m.rankCompare)
	return out[:min(len(out), limit)]
}

// rankCompare orders hits as searches rank names: shorter, then lower ID,
// then category.
func (m *tableMatches) rankCompare(x, y tableHit) int {
	if x.view == y.view { // a table's ordinals are in rank order
		return cmp.Compare(x.o, y.o)
	}
	tx, ty := m.views[x.view], m.views[y.view]
	if c := cmp.Compare(utf8.RuneCount(tx.t.Name(x.o)), utf8.RuneCount(ty.t.Name(y.o))); c != 0 {
		return c
	}
	if c := cmp.Compare(tx.t.ID(x.o), ty.t.ID(y.o)); c != 0 {
		return c
	}
	return strings.Compare(string(tx.cat), string(ty.cat))
}

// firstByKey picks, among more matches than maxSortAll, candidates that
// hold the first limit in the order of key: every match with one of the
// first values of key's column (ties whole), else the best limit by score
// or ID.
func (m *tableMatches) firstByKey(k sortKey, limit int) []tableHit {
	var out []tableHit
	switch k.field {
	case "_score":
		// The limit-th best score, then every match scoring at least that
		// (ties whole, for the keys after).
		var best []float64
		each := func(fn func(h tableHit)) {
			n := 0
			for v, bm := range m.bms {
				it := bm.Iterator()
				for it.HasNext() {
					if n++; n%65536 == 0 && m.ctx.Err() != nil {
						return // hits says why
					}
					o := it.Next()
					fn(tableHit{view: v, o: o, score: m.qs[v].scoreOf(m.p.q, o)})
				}
			}
		}
		worse := func(a, b float64) int { // the first limit, as key orders them
			if k.desc {
				return cmp.Compare(b, a)
			}
			return cmp.Compare(a, b)
		}
		each(func(h tableHit) {
			best = append(best, h.score)
			if len(best) >= 4*limit+1024 {
				slices.SortFunc(best, worse)
				best = best[:limit]
			}
		})
		slices.SortFunc(best, worse)
		if len(best) == 0 {
			return nil
		}
		edge := best[min(len(best), limit)-1]
		each(func(h tableHit) {
			if worse(h.score, edge) <= 0 {
				out = append(out, h)
			}
		})
		return out
	case indexer.DocIDField: // unique: the first limit IDs
		type idHit struct {
			id int64
			h  tableHit
		}
		order := func(x, y idHit) int {
			if k.desc {
				return compareValues(y.id, x.id, true)
			}
			return compareValues(x.id, y.id, true)
		}
		var all []idHit
		n := 0
		for v, bm := range m.bms {
			t := m.views[v].t
			it := bm.Iterator()
			for it.HasNext() {
				if n++; n%65536 == 0 && m.ctx.Err() != nil {
					return nil // hits says why
				}
				o := it.Next()
				all = append(all, idHit{id: t.ID(o), h: tableHit{view: v, o: o}})
				if len(all) >= 4*limit+1024 { // keep the first limit, in bounded memory
					slices.SortFunc(all, order)
					all = all[:limit]
				}
			}
		}
		slices.SortFunc(all, order)
		for _, x := range all[:min(len(all), limit)] {
			out = append(out, x.h)
		}
		return out
	}
	for v, bm := range m.bms {
		tv := m.views[v]
		if tv.cols == nil || !tv.cols.Has(k.field) {
			continue
		}
		vals, ords := tv.cols.Values(k.field)
		n := 0
		last := -1
		// The column's positions in key order, until limit matches and
		// the rest of the last one's value (ties whole).
		for i := range keyOrder(vals, k.desc, k.keyword) {
			if n >= limit && vals[i] != vals[last] {
				break
			}
			last = i
			if bm.Contains(ords[i]) {
				out = append(out, tableHit{view: v, o: ords[i]})
				n++
			}
		}
		if n < limit { // then those without a value, in rank order
			rest := roaring.AndNot(bm, tv.cols.Bitmap(k.field, math.MinInt64, math.MaxInt64))
			it := rest.Iterator()
			for ; n < limit && it.HasNext(); n++ {
				out = append(out, tableHit{view: v, o: it.Next()})
			}
		}
	}
	return out
}

// keyOrder yields the positions of a column's values (sorted by value) in
// the order of a sort key: by value, or for a keyword by the text of its
// value; descending reversed.
func keyOrder(vals []int64, desc, keyword bool) iter.Seq[int] {
	return func(yield func(int) bool) {
		if !keyword {
			for k := range vals {
				i := k
				if desc {
					i = len(vals) - 1 - k
				}
				if !yield(i) {
					return
				}
			}
			return
		}
		var firsts []int // the first position of each value
		for i := range vals {
			if i == 0 || vals[i] != vals[i-1] {
				firsts = append(firsts, i)
			}
		}
		slices.SortStableFunc(firsts, func(a, b int) int { return compareValues(vals[a], vals[b], true) })
		if desc {
			slices.Reverse(firsts)
		}
		for _, first := range firsts {
			for i := first; i < len(vals) && vals[i] == vals[first]; i++ {
				if !yield(i) {
					return
				}
			}
		}
	}
}

// compareValues orders two column values: keywords as bleve orders their
// terms, by the text of the ID; numbers and instants by value.
func compareValues(a, b int64, keyword bool) int {
	if !keyword || a == b {
		return cmp.Compare(a, b)
	}
	if a < 0 || b < 0 { // not an ID: compare the text itself
		var ba, bb [20]byte
		return bytes.Compare(strconv.AppendInt(ba[:0], a, 10), strconv.AppendInt(bb[:0], b, 10))
	}
	// Decimal text order without the text: compare the shorter number with
	// the longer one's leading digits; equal, the shorter (a prefix) first.
	da, db := digits(a), digits(b)
	switch {
	case da == db:
		return cmp.Compare(a, b)
	case da < db:
		if c := cmp.Compare(a, b/pow10[db-da]); c != 0 {
			return c
		}
		return -1
	default:
		if c := cmp.Compare(a/pow10[da-db], b); c != 0 {
			return c
		}
		return 1
	}
}

// pow10[i] is 10 to the i.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// digits is the number of decimal digits of a non-negative n.
func digits(n int64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// fillKeys reads each hit's sort values: IDs from the tables, others from
// the value columns (one pass over each column for all the hits).
func (m *tableMatches) fillKeys(hits []tableHit, keys []sortKey) {
	for i := range hits {
		hits[i].keys = make([]sortValue, len(keys))
	}
	for k, key := range keys {
		switch key.field {
		case "_score":
			continue
		case indexer.DocIDField:
			for i := range hits {
				hits[i].keys[k] = sortValue{v: m.views[hits[i].view].t.ID(hits[i].o)}
			}
			continue
		}
		for v := range m.views {
			at := map[uint32]int{}
			set := roaring.New()
			for i := range hits {
				if hits[i].view == v {
					at[hits[i].o] = i
					set.Add(hits[i].o)
					hits[i].keys[k] = sortValue{missing: true}
				}
			}
			m.valuesOf(v, key.field, set, func(o uint32, val int64) { hits[at[o]].keys[k] = sortValue{v: val} })
		}
	}
}

// recordsPerScan: reading a record's values costs about as much as this
// many entries of a pass over a column (a few µs against a few ns).
var recordsPerScan uint64 = 400

// valuesOf calls fn with the value of field (as its value column holds
// it) of each ordinal of set in view v that has one: from their records
// when they are few beside the column, else in one pass over it.
func (m *tableMatches) valuesOf(v int, field string, set *roaring.Bitmap, fn func(o uint32, val int64)) {
	tv := m.views[v]
	if tv.cols == nil || !tv.cols.Has(field) || set.IsEmpty() {
		return
	}
	if set.GetCardinality()*recordsPerScan < uint64(tv.cols.Count(field)) || recordsPerScan == 0 {
		it := set.Iterator()
		for it.HasNext() {
			o := it.Next()
			rec, err := query.RecordOf(m.g, tv.cat.Kind(), tv.t.ID(o))
			if err != nil {
				continue // a damaged record: as a missing value (hitOf says no more)
			}
			indexer.RecordColumnValues(rec, func(f string, val int64) {
				if f == field {
					fn(o, val)
				}
			})
		}
		return
	}
	// A bit per ordinal: testing a bit costs a fraction of a bitmap's
	// search, once per entry of the column.
	dense := make([]uint64, (tv.t.Len()+63)/64)
	it := set.Iterator()
	for it.HasNext() {
		o := it.Next()
		dense[o/64] |= 1 << (o % 64)
	}
	vals, ords := tv.cols.Values(field)
	for i, o := range ords {
		if dense[o/64]&(1<<(o%64)) != 0 {
			fn(o, vals[i])
		}
	}
}

// compare orders two hits by keys (a value before none, whichever the
// direction), then by rank.
func (m *tableMatches) compare(x, y tableHit, keys []sortKey) int {
	for k, key := range keys {
		var c int
		switch {
		case key.field == "_score":
			c = cmp.Compare(x.score, y.score)
		case x.keys[k].missing || y.keys[k].missing:
			if x.keys[k].missing != y.keys[k].missing {
				if x.keys[k].missing {
					return 1
				}
				return -1
			}
			continue
		default:
			c = compareValues(x.keys[k].v, y.keys[k].v, key.keyword)
		}
		if key.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return m.rankCompare(x, y)
}

// first is the first limit matches as answers (see hits).
func (m *tableMatches) first(limit int) ([]Hit, error) {
	th, err := m.hits(limit)
	if err != nil {
		return nil, err
	}
	return m.analystHits(th)
}

// analystHits turns hits into answers, with their records' names and
// fields.
func (m *tableMatches) analystHits(hits []tableHit) ([]Hit, error) {
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		tv := m.views[h.view]
		hit, err := hitOf(m.g, strconv.FormatInt(tv.t.ID(h.o), 10), string(tv.cat), h.score, m.p.fields)
		if err != nil {
			return nil, err
		}
		out = append(out, hit)
	}
	return out, nil
}

// scoreOf is the score of ordinal o, which q matches (see the package's
// table queries: text matches of the name fields score, filters do not).
func (e *tableQuery) scoreOf(q bquery.Query, o uint32) float64 {
	var words [][]byte
	read := false
	return e.scoreWith(q, o, func() [][]byte {
		if !read {
			read = true
			_ = indexer.EachWord(e.tv.t.Name(o), func(w []byte) bool { words = append(words, w); return true })
		}
		return words
	})
}

func (e *tableQuery) scoreWith(q bquery.Query, o uint32, words func() [][]byte) float64 {
	if r, ok := e.rewritten[q]; ok {
		q = r
	}
	if l, ok := e.leaves[q]; ok {
		if !l.bm.Contains(o) {
			return 0
		}
		tf, n := 1.0, 1.0
		if l.field != indexer.FieldName {
			ws := words()
			n = float64(max(len(ws), 1))
			if l.term != nil {
				tf = 0
				for _, w := range ws {
					if l.term(w) {
						tf++
					}
				}
				tf = max(tf, 1)
			}
		}
		return l.boost * l.idf * math.Sqrt(tf) / math.Sqrt(n)
	}
	sum := func(qs []bquery.Query) (float64, int) {
		s, matched := 0.0, 0
		for _, c := range qs {
			if v := e.scoreWith(c, o, words); v > 0 {
				s += v
				matched++
			}
		}
		return s, matched
	}
	switch c := q.(type) {
	case *bquery.ConjunctionQuery:
		s, _ := sum(c.Conjuncts)
		return s
	case *bquery.DisjunctionQuery:
		s, matched := sum(c.Disjuncts)
		if len(c.Disjuncts) == 0 {
			return 0
		}
		return s * float64(matched) / float64(len(c.Disjuncts))
	case *bquery.BooleanQuery:
		s := 0.0
		for _, sub := range []bquery.Query{c.Must, c.Should} {
			if sub != nil {
				s += e.scoreWith(sub, o, words)
			}
		}
		return s
	}
	return 0
}

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
