package analyst

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	bquery "github.com/blevesearch/bleve/v2/search/query"

	"gds/indexer"
	"gds/indexer/nametable"
)

// The categories a generation leaves out of bleve (indexer.TablesOnly:
// characters) are answered from their name tables and value columns
// alone, every query of the syntax: each clause becomes a bitmap of table
// ordinals, and/or/not combine them, text matches of the name fields are
// scored, sorts and facets read the value columns. A clause is answered
// as bleve answers it over the same documents (property tests compare the
// two on the same snapshot, built both ways):
//
//	name:…      the folded name, whole: exact (the name table's strict
//	            lookup), wildcards (the tables' patterns), regexps and
//	            fuzzy terms (a pass over every name)
//	words:…     the folded name's words: a term is found through the
//	            trigram lists of the names containing it, then each
//	            candidate's words are compared; phrases, wildcards, regexps
//	            and fuzzy terms compare every word of the candidates
//	id:…        the ID in decimal, one term
//	corporation_id, alliance_id   ID keywords: their value columns
//	birthday    ranges from its value column; "birthday:*" has one
//
// Scores: a text match of name or words scores each matching document
// boost × idf × √tf / √(words), idf = 1 + ln(documents / (1 + matches)),
// bleve's TF-IDF without its query norm; a conjunction adds its clauses'
// scores, a disjunction adds them scaled by the share of its clauses that
// match. Filters (patterns, ranges, keywords, IDs) score nothing.

// tableQuery evaluates a query over one table view of a category the
// tables answer.
type tableQuery struct {
	ctx context.Context
	g   *indexer.Generation
	tv  tableView
	// docs is the number of documents of the category (for idf).
	docs float64
	// leaves holds the matches of each scoring clause, for scores.
	leaves map[bquery.Query]*scoredLeaf
	// rewritten maps a match query to the terms it scores as.
	rewritten map[bquery.Query]bquery.Query
}

// scoredLeaf is a scoring clause's matches and what scores them.
type scoredLeaf struct {
	bm    *roaring.Bitmap
	field string
	// term counts a document's matching words (for √tf); nil counts one.
	term  func(word []byte) bool
	idf   float64
	boost float64
}

func newTableQuery(ctx context.Context, g *indexer.Generation, tv tableView, docs int) *tableQuery {
	return &tableQuery{ctx: ctx, g: g, tv: tv, docs: float64(docs), leaves: map[bquery.Query]*scoredLeaf{}}
}

// badClause is an analyst's error found while evaluating.
func badClause(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
}

// eval returns the ordinals of the view that q matches.
func (e *tableQuery) eval(q bquery.Query) (*roaring.Bitmap, error) {
	if err := e.ctx.Err(); err != nil {
		return nil, err
	}
	switch c := q.(type) {
	case *bquery.MatchAllQuery:
		return e.tv.all(), nil
	case *bquery.MatchNoneQuery:
		return roaring.New(), nil
	case *bquery.ConjunctionQuery:
		return e.combine(c.Conjuncts, len(c.Conjuncts))
	case *bquery.DisjunctionQuery:
		return e.combine(c.Disjuncts, max(1, int(c.Min)))
	case *bquery.BooleanQuery:
		return e.boolean(c)
	case *bquery.NumericRangeQuery, *bquery.DateRangeQuery:
		r, ok := rangeOf(q)
		if !ok {
			if f, isField := fieldNamed(q.(bquery.FieldableQuery).Field()); isField && (f.Type == indexer.Numeric || f.Type == indexer.DateTime) {
				return nil, badClause("the range on %s has no bound, or one beyond the instants an index holds", f.Name)
			}
			return roaring.New(), nil // a range of a text or keyword field: no numeric terms
		}
		if e.tv.cols == nil {
			return nil, fmt.Errorf("analysts' query: %s has no value columns", e.tv.cat)
		}
		return e.tv.valueRange(r), nil
	case *bquery.WildcardQuery:
		g := compileGlob(c.Wildcard)
		lit, _ := g.longestLiteral()
		return e.terms(c.FieldVal, c.Wildcard == "*", g.match, []byte(lit),
			func() (*roaring.Bitmap, error) { return e.tv.pattern(e.ctx, c.Wildcard) })
	case *bquery.RegexpQuery:
		re, err := regexp.Compile("^(?:" + c.Regexp + ")$")
		if err != nil {
			return nil, badClause("regular expression /%s/: %v", c.Regexp, err)
		}
		lit, _ := re.LiteralPrefix()
		return e.terms(c.FieldVal, false, re.Match, []byte(lit), nil)
	case *bquery.FuzzyQuery:
		return e.fuzzy(q, c.FieldVal, c.Term, c.Fuzziness, c.Prefix, c.BoostVal.Value())
	case *bquery.MatchQuery:
		return e.match(q, c)
	case *bquery.MatchPhraseQuery:
		return e.phrase(q, c)
	case *bquery.TermQuery:
		return e.term(q, c.FieldVal, c.Term, c.BoostVal.Value())
	case *bquery.DocIDQuery:
		ids := map[int64]bool{}
		for _, s := range c.IDs {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(n, 10) == s {
				ids[n] = true
			}
		}
		return e.scanIDs(func(id int64) bool { return ids[id] }), nil
	}
	return nil, badClause("%T clauses are not answered for %s", q, e.tv.cat)
}

// combine matches the ordinals that at least need of qs match.
func (e *tableQuery) combine(qs []bquery.Query, need int) (*roaring.Bitmap, error) {
	if len(qs) == 0 {
		return roaring.New(), nil
	}
	// atLeast[k] holds the ordinals matched by more than k of the clauses
	// seen so far.
	atLeast := make([]*roaring.Bitmap, need)
	for i := range atLeast {
		atLeast[i] = roaring.New()
	}
	for _, q := range qs {
		bm, err := e.eval(q)
		if err != nil {
			return nil, err
		}
		for k := need - 1; k > 0; k-- {
			atLeast[k].Or(roaring.And(atLeast[k-1], bm))
		}
		atLeast[0].Or(bm)
	}
	return atLeast[need-1], nil
}

// boolean is bleve's boolean query: every must clause, the should clauses
// (at least Min of them, or one when there is nothing else; optional
// beside must clauses otherwise), no must-not clause.
func (e *tableQuery) boolean(c *bquery.BooleanQuery) (*roaring.Bitmap, error) {
	var out *roaring.Bitmap
	and := func(q bquery.Query) error { // out ∩ q's matches
		bm, err := e.eval(q)
		if err == nil && out == nil {
			out = bm
		} else if err == nil {
			out.And(bm)
		}
		return err
	}
	if c.Must != nil {
		if err := and(c.Must); err != nil {
			return nil, err
		}
	}
	if c.Should != nil {
		min := 0
		if d, ok := c.Should.(*bquery.DisjunctionQuery); ok {
			min = int(d.Min)
		}
		if out == nil || min > 0 {
			if err := and(c.Should); err != nil {
				return nil, err
			}
		} else if _, err := e.eval(c.Should); err != nil { // for the scores
			return nil, err
		}
	}
	if c.Filter != nil {
		if err := and(c.Filter); err != nil {
			return nil, err
		}
	}
	if out == nil {
		out = e.tv.all()
	}
	if c.MustNot != nil {
		bm, err := e.eval(c.MustNot)
		if err != nil {
			return nil, err
		}
		out.AndNot(bm)
	}
	return out, nil
}

// terms matches the documents with a term of field that match matches:
// the name, one of its words, the ID or a keyword's value. all is a
// pattern matching any term (field:*); lit is a part every matching term
// contains (to find candidate names through the trigram lists), or nil;
// names, when set, answers the name field itself.
func (e *tableQuery) terms(field string, all bool, match func([]byte) bool, lit []byte, names func() (*roaring.Bitmap, error)) (*roaring.Bitmap, error) {
	switch {
	case field == indexer.FieldName && names != nil:
		return names()
	case field == indexer.FieldName:
		return e.scanNames(lit, match)
	case field == indexer.FieldWords || field == "":
		return e.scanWords(lit, match)
	case field == indexer.DocIDField:
		var buf []byte
		return e.scanIDs(func(id int64) bool { buf = strconv.AppendInt(buf[:0], id, 10); return match(buf) }), nil
	case e.g.KeywordColumn(field, e.tv.cat):
		var buf []byte
		return e.keywordValues(field, func(v int64) bool { buf = strconv.AppendInt(buf[:0], v, 10); return match(buf) }), nil
	case all:
		if f, ok := fieldNamed(field); ok && (f.Type == indexer.Numeric || f.Type == indexer.DateTime) && indexer.ColumnField(field, e.tv.cat) {
			return e.tv.valueRange(valueRange{field: field, lo: math.MinInt64, hi: math.MaxInt64}), nil
		}
	}
	return roaring.New(), nil // a field this category's documents do not have
}

// scanNames matches the names (folded, whole) that match matches; lit, when
// three bytes or more, is a part each of them contains.
func (e *tableQuery) scanNames(lit []byte, match func([]byte) bool) (*roaring.Bitmap, error) {
	out := roaring.New()
	err := e.candidates(lit, func(o uint32, name []byte) {
		if match(name) {
			out.Add(o)
		}
	})
	return out, err
}

// scanWords matches the names one of whose words match matches; lit, when
// three bytes or more, is a part each such word contains.
func (e *tableQuery) scanWords(lit []byte, match func(word []byte) bool) (*roaring.Bitmap, error) {
	out := roaring.New()
	var werr error
	err := e.candidates(lit, func(o uint32, name []byte) {
		if err := indexer.EachWord(name, func(w []byte) bool {
			if match(w) {
				out.Add(o)
				return false
			}
			return true
		}); err != nil {
			werr = err
		}
	})
	if err == nil {
		err = werr
	}
	return out, err
}

// candidates calls fn with every name the view shows that contains lit
// (every name when lit is shorter than a trigram).
func (e *tableQuery) candidates(lit []byte, fn func(o uint32, name []byte)) error {
	t := e.tv.t
	if len(lit) < 3 {
		for o := range uint32(t.Len()) {
			if o%65536 == 0 && e.ctx.Err() != nil {
				return e.ctx.Err()
			}
			if e.tv.hide == nil || !e.tv.hide.Contains(o) {
				fn(o, t.Name(o))
			}
		}
		return nil
	}
	f := nametable.Filter{Hide: e.tv.hide}
	var st nametable.Stats
	n := 0
	t.Contains(lit, &f, &st, 0, func(o uint32, _ nametable.Match) bool {
		if n++; n%65536 == 0 && e.ctx.Err() != nil {
			return false
		}
		fn(o, t.Name(o))
		return true
	})
	return e.ctx.Err()
}

// scanIDs matches the documents whose ID keep accepts.
func (e *tableQuery) scanIDs(keep func(id int64) bool) *roaring.Bitmap {
	out := roaring.New()
	for o := range uint32(e.tv.t.Len()) {
		if (e.tv.hide == nil || !e.tv.hide.Contains(o)) && keep(e.tv.t.ID(o)) {
			out.Add(o)
		}
	}
	return out
}

// keywordValues matches the documents whose value of the keyword column
// field keep accepts; keep sees each distinct value once.
func (e *tableQuery) keywordValues(field string, keep func(v int64) bool) *roaring.Bitmap {
	out := roaring.New()
	var last int64
	seen, kept := false, false
	e.tv.cols.Each(field, func(o uint32, v int64) {
		if !seen || v != last {
			last, seen, kept = v, true, keep(v)
		}
		if kept {
			out.Add(o)
		}
	})
	if e.tv.hide != nil {
		out.AndNot(e.tv.hide)
	}
	return out
}

// term matches one exact term of field (analysed already), and scores it
// when the field is text.
func (e *tableQuery) term(q bquery.Query, field, term string, boost float64) (*roaring.Bitmap, error) {
	switch field {
	case indexer.FieldName:
		out := roaring.New()
		f := nametable.Filter{Hide: e.tv.hide}
		var st nametable.Stats
		if len(term) > 0 {
			e.tv.t.Strict([]byte(term), &f, &st, func(o uint32, _ int64) bool { out.Add(o); return true })
		}
		e.score(q, out, field, nil, boost)
		return out, nil
	case indexer.FieldWords, "":
		w := []byte(term)
		out, err := e.scanWords(w, func(x []byte) bool { return bytes.Equal(x, w) })
		if err != nil {
			return nil, err
		}
		e.score(q, out, indexer.FieldWords, func(x []byte) bool { return bytes.Equal(x, w) }, boost)
		return out, nil
	case indexer.DocIDField:
		n, err := strconv.ParseInt(term, 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != term {
			return roaring.New(), nil
		}
		return e.scanIDs(func(id int64) bool { return id == n }), nil
	}
	if e.g.KeywordColumn(field, e.tv.cat) {
		n, err := strconv.ParseInt(term, 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != term {
			return roaring.New(), nil
		}
		bm := e.tv.cols.Bitmap(field, n, n)
		if e.tv.hide != nil {
			bm.AndNot(e.tv.hide)
		}
		return bm, nil
	}
	return roaring.New(), nil // a date's or an absent field's text: no such term
}

// score records a scoring clause's matches.
func (e *tableQuery) score(q bquery.Query, bm *roaring.Bitmap, field string, term func([]byte) bool, boost float64) {
	e.leaves[q] = &scoredLeaf{bm: bm, field: field, term: term, boost: boost,
		idf: 1 + math.Log(e.docs/(1+float64(bm.GetCardinality())))}
}

// analyze is the terms a field's analyzer makes of text: the name's or
// the words' for text fields, the whole text for keywords.
func analyze(field, text string) ([]string, error) {
	switch field {
	case indexer.FieldName, indexer.FieldWords, "":
		if field == "" {
			field = indexer.FieldWords
		}
		return indexer.AnalyzeName(field, text)
	}
	return []string{text}, nil
}

// subs remembers that q scores as its rewritten form.
func (e *tableQuery) subs(q, as bquery.Query) {
	if e.rewritten == nil {
		e.rewritten = map[bquery.Query]bquery.Query{}
	}
	e.rewritten[q] = as
}

// fuzzy matches the terms of field within fuzziness edits of term (whose
// first prefix bytes must match exactly).
func (e *tableQuery) fuzzy(q bquery.Query, field, term string, fuzziness, prefix int, boost float64) (*roaring.Bitmap, error) {
	if err := checkFuzziness(term, fuzziness); err != nil {
		return nil, badClause("%v", err)
	}
	t := []byte(term)
	edits := newEditMatcher(t, fuzziness)
	match := func(w []byte) bool {
		if prefix > 0 && (len(w) < prefix || len(t) < prefix || !bytes.Equal(w[:prefix], t[:prefix])) {
			return false
		}
		return edits.match(w)
	}
	bm, err := e.terms(field, false, match, nil, nil)
	if err != nil {
		return nil, err
	}
	switch field {
	case indexer.FieldName, indexer.FieldWords, "":
		e.score(q, bm, field, match, boost)
	}
	return bm, nil
}

// phrase is bleve's match phrase: the text's terms one after another.
func (e *tableQuery) phrase(q bquery.Query, c *bquery.MatchPhraseQuery) (*roaring.Bitmap, error) {
	terms, err := analyze(c.FieldVal, c.MatchPhrase)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return roaring.New(), nil
	}
	eq := func(want string, w []byte) bool {
		if c.Fuzziness > 0 {
			return withinEdits([]byte(want), w, c.Fuzziness)
		}
		return string(w) == want
	}
	switch c.FieldVal {
	case indexer.FieldName:
		if c.Fuzziness > 0 {
			return e.fuzzy(q, c.FieldVal, terms[0], c.Fuzziness, 0, c.BoostVal.Value())
		}
		return e.term(q, c.FieldVal, terms[0], c.BoostVal.Value())
	case indexer.FieldWords, "":
	default:
		if len(terms) == 1 && c.Fuzziness == 0 {
			return e.term(q, c.FieldVal, terms[0], c.BoostVal.Value())
		}
		return roaring.New(), nil // keywords keep no positions
	}
	var lit []byte
	if c.Fuzziness == 0 {
		for _, t := range terms {
			if len(t) > len(lit) {
				lit = []byte(t)
			}
		}
	}
	var words [][]byte
	out := roaring.New()
	var werr error
	err = e.candidates(lit, func(o uint32, name []byte) {
		words = words[:0]
		if err := indexer.EachWord(name, func(w []byte) bool { words = append(words, w); return true }); err != nil {
			werr = err
			return
		}
		for i := 0; i+len(terms) <= len(words); i++ {
			ok := true
			for k, t := range terms {
				if !eq(t, words[i+k]) {
					ok = false
					break
				}
			}
			if ok {
				out.Add(o)
				return
			}
		}
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	e.score(q, out, indexer.FieldWords, nil, c.BoostVal.Value())
	return out, nil
}

// match is bleve's match query: the text analysed into terms, any of them
// (all with the and operator), each within its fuzziness.
func (e *tableQuery) match(q bquery.Query, c *bquery.MatchQuery) (*roaring.Bitmap, error) {
	terms, err := analyze(c.FieldVal, c.Match)
	if err != nil {
		return nil, err
	}
	subs := make([]bquery.Query, 0, len(terms))
	for _, t := range terms {
		var s bquery.Query
		if c.Fuzziness > 0 {
			f := &bquery.FuzzyQuery{Term: t, Prefix: c.Prefix, Fuzziness: c.Fuzziness, FieldVal: c.FieldVal, BoostVal: c.BoostVal}
			s = f
		} else {
			s = &bquery.TermQuery{Term: t, FieldVal: c.FieldVal, BoostVal: c.BoostVal}
		}
		subs = append(subs, s)
	}
	if len(subs) == 0 {
		return roaring.New(), nil
	}
	var combined bquery.Query
	if c.Operator == bquery.MatchQueryOperatorAnd {
		combined = &bquery.ConjunctionQuery{Conjuncts: subs}
	} else {
		combined = &bquery.DisjunctionQuery{Disjuncts: subs}
	}
	e.subs(q, combined)
	return e.eval(combined)
}
