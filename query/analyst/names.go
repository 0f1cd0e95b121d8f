package analyst

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	bquery "github.com/blevesearch/bleve/v2/search/query"

	"gds/indexer"
	"gds/indexer/nametable"
	"gds/indexer/valuecol"
	"gds/snapshots"
)

// Queries made only of name patterns (name:kari*, name:*ari*, and any
// and/or/not of them) are answered from the generation's name tables
// rather than bleve: the tables hold every document's folded name, the
// same term bleve's name field holds, with trigram postings that find the
// names containing a literal part of the pattern. bleve instead expands a
// pattern into every matching term and looks each up in every segment,
// and a leading wildcard walks the whole term dictionary of every segment
// (seconds at 10M names). The matches are kept as bitmaps of table
// ordinals (an eighth of a byte a name at most), so a pattern matching
// millions counts them without holding millions of hits.

// nameTables turns the name tables' answers on (tests compare them with
// bleve's own).
var nameTables = true

// namePlan is a query answerable from the name tables.
type namePlan struct {
	q bquery.Query
}

// nameOnly returns the plan of q when every clause of q is a wildcard on
// the name field, "*", a range of a numeric or date field (when ranges,
// the generation's value columns, are there to answer it), or an
// and/or/not of them, with set semantics bleve agrees with; otherwise
// false. Sorts and facets need bleve's doc values, scores its statistics:
// a plan only serves unscored, unsorted queries without facets.
func nameOnly(p *plan, ranges bool) (*namePlan, bool) {
	if !nameTables || !p.unscored || len(p.sort) > 0 || len(p.facets) > 0 || !tableClause(p.q, ranges) {
		return nil, false
	}
	return &namePlan{q: p.q}, true
}

// tableClause reports whether the tables answer q: see nameOnly.
func tableClause(q bquery.Query, ranges bool) bool {
	switch c := q.(type) {
	case *bquery.WildcardQuery:
		return c.FieldVal == indexer.FieldName
	case *bquery.MatchAllQuery:
		return true
	case *bquery.NumericRangeQuery, *bquery.DateRangeQuery:
		_, ok := rangeOf(q)
		return ranges && ok
	case *bquery.ConjunctionQuery:
		return len(c.Conjuncts) > 0 && !slices.ContainsFunc(c.Conjuncts, func(q bquery.Query) bool { return !tableClause(q, ranges) })
	case *bquery.DisjunctionQuery:
		return c.Min <= 1 && len(c.Disjuncts) > 0 && !slices.ContainsFunc(c.Disjuncts, func(q bquery.Query) bool { return !tableClause(q, ranges) })
	case *bquery.BooleanQuery:
		if c.Filter != nil || (c.Must == nil && c.Should == nil && c.MustNot == nil) {
			return false
		}
		if d, ok := c.Should.(*bquery.DisjunctionQuery); ok && c.Must != nil && d.Min > 0 {
			return false // should clauses that a must clause does not make optional
		}
		for _, sub := range []bquery.Query{c.Must, c.Should, c.MustNot} {
			if sub != nil && !tableClause(sub, ranges) {
				return false
			}
		}
		return true
	}
	return false
}

// tableView is one table of a category, its value columns (nil in a
// generation without) and the ordinals it hides (the base's ordinals a
// delta replaces).
type tableView struct {
	cat  snapshots.Category
	t    *nametable.Table
	cols *valuecol.File
	hide *roaring.Bitmap
}

func tableViews(g *indexer.Generation, cats []snapshots.Category) []tableView {
	var out []tableView
	for _, cat := range cats {
		ct := g.Tables(cat)
		if ct == nil || ct.Base == nil {
			continue
		}
		tv := tableView{cat: cat, t: ct.Base, cols: ct.BaseColumns}
		if ct.Delta != nil {
			tv.hide = ct.Delta.Mask()
			out = append(out, tableView{cat: cat, t: ct.Delta, cols: ct.DeltaColumns})
		}
		out = append(out, tv)
	}
	return out
}

// matches returns the ordinals of tv's names that q matches.
func (tv tableView) matches(ctx context.Context, q bquery.Query) (*roaring.Bitmap, error) {
	switch c := q.(type) {
	case *bquery.WildcardQuery:
		return tv.pattern(ctx, c.Wildcard)
	case *bquery.MatchAllQuery:
		return tv.all(), nil
	case *bquery.NumericRangeQuery, *bquery.DateRangeQuery:
		r, ok := rangeOf(q)
		if !ok || tv.cols == nil {
			return nil, fmt.Errorf("analysts' query: %T is not a range the value columns answer", q)
		}
		return tv.valueRange(r), nil
	case *bquery.ConjunctionQuery:
		return tv.combine(ctx, c.Conjuncts, true)
	case *bquery.DisjunctionQuery:
		return tv.combine(ctx, c.Disjuncts, false)
	case *bquery.BooleanQuery:
		var out *roaring.Bitmap
		var err error
		switch {
		case c.Must != nil: // should clauses are then optional: they only score
			out, err = tv.matches(ctx, c.Must)
		case c.Should != nil:
			out, err = tv.matches(ctx, c.Should)
		default: // only must-not clauses: everything else
			out = tv.all()
		}
		if err != nil || c.MustNot == nil {
			return out, err
		}
		not, err := tv.matches(ctx, c.MustNot)
		if err != nil {
			return nil, err
		}
		out.AndNot(not)
		return out, nil
	}
	return nil, fmt.Errorf("analysts' query: %T is not a clause the tables answer", q)
}

// combine is the and (or the or) of qs's matches.
func (tv tableView) combine(ctx context.Context, qs []bquery.Query, and bool) (*roaring.Bitmap, error) {
	var out *roaring.Bitmap
	for _, q := range qs {
		bm, err := tv.matches(ctx, q)
		switch {
		case err != nil:
			return nil, err
		case out == nil:
			out = bm
		case and:
			out.And(bm)
		default:
			out.Or(bm)
		}
	}
	return out, nil
}

// all is every ordinal tv shows.
func (tv tableView) all() *roaring.Bitmap {
	bm := roaring.New()
	bm.AddRange(0, uint64(tv.t.Len()))
	if tv.hide != nil {
		bm.AndNot(tv.hide)
	}
	return bm
}

// pattern returns the ordinals whose name matches the wildcard pattern as
// bleve matches it against the name field's one term: * any run of
// characters, ? one character, the rest literal, the whole name.
func (tv tableView) pattern(ctx context.Context, pat string) (*roaring.Bitmap, error) {
	g := compileGlob(pat)
	if bm, ok := tv.exactPattern(g); ok {
		// Milliseconds even for millions of names, so the context is
		// asked once, after: a query past its time fails as a walk's does.
		return bm, ctx.Err()
	}
	return tv.walkPattern(ctx, g)
}

// walkPattern is pattern by a walk of the lists of g's longest literal
// (of every name, when it is shorter than three bytes) that verifies each
// candidate.
func (tv tableView) walkPattern(ctx context.Context, g *glob) (*roaring.Bitmap, error) {
	out := roaring.New()
	lit, prefix := g.longestLiteral()
	if len(lit) < 3 {
		// No trigram to look up: every name is a candidate.
		for o := range uint32(tv.t.Len()) {
			if o%65536 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if (tv.hide == nil || !tv.hide.Contains(o)) && g.match(tv.t.Name(o)) {
				out.Add(o)
			}
		}
		return out, nil
	}
	f := nametable.Filter{Hide: tv.hide}
	var st nametable.Stats
	n := 0
	tv.t.Contains([]byte(lit), &f, &st, 0, func(o uint32, m nametable.Match) bool {
		if prefix && m == nametable.MatchContains {
			return false // prefix matches all came first
		}
		if n++; n%65536 == 0 && ctx.Err() != nil {
			return false
		}
		if g.match(tv.t.Name(o)) {
			out.Add(o)
		}
		return true
	})
	return out, ctx.Err()
}

// exactPattern returns the ordinals matching g read whole from the one
// list of the table that holds them, when g is *lit* or lit* and the
// table has lit's exact list (see nametable.ContainsSet and PrefixSet);
// otherwise false, and pattern walks and verifies. The list holds the
// names containing (or starting with) lit, byte for byte, as the walk's
// verification compares them; less the hidden ones, and those holding a
// newline, which the pattern's regexp does not match (see match).
func (tv tableView) exactPattern(g *glob) (*roaring.Bitmap, bool) {
	var lit string
	var set func(text []byte) (*roaring.Bitmap, bool)
	switch p := g.parts; {
	case len(p) == 3 && p[0].star && p[1].lit != "" && p[2].star:
		lit, set = p[1].lit, tv.t.ContainsSet
	case len(p) == 2 && p[0].lit != "" && p[1].star:
		lit, set = p[0].lit, tv.t.PrefixSet
	default:
		return nil, false
	}
	if strings.Contains(lit, "\n") {
		return nil, false
	}
	bm, ok := set([]byte(lit))
	if !ok {
		return nil, false
	}
	if tv.hide != nil {
		bm.AndNot(tv.hide)
	}
	if breaks := tv.t.LineBreaks(); !breaks.IsEmpty() {
		bm.AndNot(breaks)
	}
	return bm, true
}

// glob is a bleve wildcard pattern split into its parts.
type glob struct {
	parts []globPart
	re    *regexp.Regexp // what bleve runs, for names glob cannot match alone
}

type globPart struct {
	lit  string // literal text, or
	star bool   // *: any run of characters
	one  bool   // ?: one character
}

func compileGlob(pat string) *glob {
	g := &glob{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			g.parts = append(g.parts, globPart{lit: lit.String()})
			lit.Reset()
		}
	}
	for _, r := range pat {
		switch r {
		case '*':
			flush()
			if len(g.parts) == 0 || !g.parts[len(g.parts)-1].star {
				g.parts = append(g.parts, globPart{star: true})
			}
		case '?':
			flush()
			g.parts = append(g.parts, globPart{one: true})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	// bleve's own translation; compiled lazily, rarely needed.
	g.re, _ = regexp.Compile("^(?:" + wildcardRegexp(pat) + ")$")
	return g
}

// wildcardRegexp is bleve's translation of a wildcard into a regexp.
func wildcardRegexp(pat string) string {
	var b strings.Builder
	for _, r := range pat {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '+', '(', ')', '^', '$', '.', '{', '}', '[', ']', '|', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// longestLiteral returns the pattern's longest literal part, and whether
// it is the pattern's start.
func (g *glob) longestLiteral() (string, bool) {
	best, at := "", -1
	for i, p := range g.parts {
		if len(p.lit) > len(best) {
			best, at = p.lit, i
		}
	}
	return best, at == 0
}

// match reports whether name matches the whole pattern. A regexp's dot
// matches neither a newline nor a broken UTF-8 byte as a character;
// names holding either are left to the regexp.
func (g *glob) match(name []byte) bool {
	if bytes.IndexByte(name, '\n') >= 0 || !utf8.Valid(name) {
		return g.re != nil && g.re.Match(name)
	}
	return globMatch(g.parts, name)
}

// globMatch matches parts against the whole of s, backtracking on stars.
func globMatch(parts []globPart, s []byte) bool {
	for i, p := range parts {
		switch {
		case p.star:
			rest := parts[i+1:]
			if len(rest) == 0 {
				return true
			}
			for j := 0; j <= len(s); {
				if globMatch(rest, s[j:]) {
					return true
				}
				if j == len(s) {
					break
				}
				_, n := utf8.DecodeRune(s[j:])
				j += n
			}
			return false
		case p.one:
			if len(s) == 0 {
				return false
			}
			_, n := utf8.DecodeRune(s)
			s = s[n:]
		default:
			if !bytes.HasPrefix(s, []byte(p.lit)) {
				return false
			}
			s = s[len(p.lit):]
		}
	}
	return len(s) == 0
}

// nameHit is a match of a table, ordered as a search orders names:
// shorter first, then lower ID, then category.
type nameHit struct {
	runes int
	id    int64
	cat   snapshots.Category
}

// queryNames answers a plan of table clauses (names, ranges): the total,
// and the first hits (shortest names first) with their stored fields from
// the records.
func (a *Engine) queryNames(ctx context.Context, g *indexer.Generation, p *plan, np *namePlan, res *Result) error {
	var hits []nameHit
	for _, tv := range tableViews(g, p.cats) {
		bm, err := tv.matches(ctx, np.q)
		if err != nil {
			return err
		}
		res.Total += bm.GetCardinality()
		it := bm.Iterator()
		// Ordinals are in rank order within a table: its first limit
		// matches are the only ones that can be among the first overall.
		for k := 0; k < p.limit && it.HasNext(); k++ {
			o := it.Next()
			hits = append(hits, nameHit{runes: utf8.RuneCount(tv.t.Name(o)), id: tv.t.ID(o), cat: tv.cat})
		}
	}
	slices.SortFunc(hits, func(x, y nameHit) int {
		if x.runes != y.runes {
			return x.runes - y.runes
		}
		if x.id != y.id {
			if x.id < y.id {
				return -1
			}
			return 1
		}
		return strings.Compare(string(x.cat), string(y.cat))
	})
	hits = hits[:min(len(hits), p.limit)]
	for _, h := range hits {
		hit, err := hitOf(g, strconv.FormatInt(h.id, 10), string(h.cat), 0, p.fields)
		if err != nil {
			return err
		}
		res.Hits = append(res.Hits, hit)
	}
	return nil
}

// maxNameIDs is the most documents a name clause inside a larger query is
// turned into (as their IDs, or the IDs of those it does not match): bleve
// looks each ID up in every segment, cheaper than expanding a pattern into
// its terms and far cheaper than walking every term for an infix, but not
// for millions. Beyond it bleve expands the pattern itself.
var maxNameIDs = 20000

// rewriteNames replaces each name-only clause of an unscored query over
// one category by the documents the name tables find for it: the clause
// name:kari* in +name:kari* +corporation_id:98000001 becomes the IDs of
// the names starting with kari. Scored queries keep bleve's clauses, whose
// scores the IDs would not give; several categories too, since an ID may
// name documents of two categories.
func rewriteNames(ctx context.Context, g *indexer.Generation, p *plan) error {
	if !nameTables || !p.unscored || len(p.cats) != 1 {
		return nil
	}
	tvs := tableViews(g, p.cats)
	if len(tvs) == 0 {
		return nil
	}
	var err error
	var rewrite func(q bquery.Query) bquery.Query
	rewrite = func(q bquery.Query) bquery.Query {
		if err != nil {
			return q
		}
		// Name clauses only: bleve intersects a range with other clauses
		// well, and a range's IDs would cost more than its terms.
		if _, all := q.(*bquery.MatchAllQuery); !all && tableClause(q, false) {
			var r bquery.Query
			r, err = idsQuery(ctx, tvs, q)
			if r == nil {
				return q
			}
			return r
		}
		rewriteChildren(q, rewrite)
		return q
	}
	p.q = rewrite(p.q)
	return err
}

// idsQuery is a query matching the documents the name clause q matches,
// by their IDs or by the IDs of the others, or nil when both are more than
// maxNameIDs.
func idsQuery(ctx context.Context, tvs []tableView, q bquery.Query) (bquery.Query, error) {
	var in, out []*roaring.Bitmap
	var nIn, nOut uint64
	for _, tv := range tvs {
		bm, err := tv.matches(ctx, q)
		if err != nil {
			return nil, err
		}
		rest := tv.all()
		rest.AndNot(bm)
		in, out = append(in, bm), append(out, rest)
		nIn, nOut = nIn+bm.GetCardinality(), nOut+rest.GetCardinality()
	}
	ids := func(bms []*roaring.Bitmap, n uint64) []string {
		out := make([]string, 0, n)
		for i, bm := range bms {
			it := bm.Iterator()
			for it.HasNext() {
				out = append(out, strconv.FormatInt(tvs[i].t.ID(it.Next()), 10))
			}
		}
		return out
	}
	switch {
	case nIn <= uint64(maxNameIDs):
		return bleve.NewDocIDQuery(ids(in, nIn)), nil
	case nOut <= uint64(maxNameIDs):
		b := bleve.NewBooleanQuery()
		b.AddMust(bleve.NewMatchAllQuery())
		b.AddMustNot(bleve.NewDocIDQuery(ids(out, nOut)))
		return b, nil
	}
	return nil, nil
}
