package analyst

import (
	"bytes"
	"cmp"
	"gds/indexer"
	"gds/query"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

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

// firstByKey picks, among more matches than maxSortAll, candidates that
// hold the first limit in the order of key: every match with one of the
// first values of key's column (ties whole), else the best limit by score
// or ID.
func (m *tableMatches) firstByKey(k sortKey, limit int) []tableHit {
	switch k.field {
	case "_score":
		return m.firstByScore(k, limit)
	case indexer.DocIDField:
		return m.firstByID(k, limit)
	}
	return m.firstByColumn(k, limit)
}

// firstByScore is firstByKey on _score: the limit-th best score, then every
// match scoring at least that (ties whole, for the keys after).
func (m *tableMatches) firstByScore(k sortKey, limit int) []tableHit {
	var out []tableHit
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
}

// firstByID is firstByKey on the document ID, which is unique: the first
// limit IDs.
func (m *tableMatches) firstByID(k sortKey, limit int) []tableHit {
	var out []tableHit
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

// firstByColumn is firstByKey on a value column.
func (m *tableMatches) firstByColumn(k sortKey, limit int) []tableHit {
	var out []tableHit
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
