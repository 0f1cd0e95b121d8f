package analyst

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer"
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

// pow10[i] is 10 to the i.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// recordsPerScan: reading a record's values costs about as much as this
// many entries of a pass over a column (a few µs against a few ns).
var recordsPerScan uint64 = 400

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
