package analyst

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	bquery "github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	vregexp "github.com/blevesearch/vellum/regexp"

	"gds/indexer"
	"gds/snapshots"
)

// The clauses of an analyst's parsed query: checked before bleve searches,
// and rewritten where the analysts' fields mean something bleve would not.

// eachClause calls fn with every clause of q, however deeply the clauses
// nest, until fn returns an error.
func eachClause(q bquery.Query, fn func(bquery.Query) error) error {
	var subs []bquery.Query
	switch q := q.(type) {
	case *bquery.BooleanQuery:
		subs = []bquery.Query{q.Must, q.Should, q.MustNot}
	case *bquery.ConjunctionQuery:
		subs = q.Conjuncts
	case *bquery.DisjunctionQuery:
		subs = q.Disjuncts
	}
	for _, c := range subs {
		if c != nil {
			if err := eachClause(c, fn); err != nil {
				return err
			}
		}
	}
	return fn(q)
}

// renameField makes every clause of q that names field from name field to
// instead.
func renameField(q bquery.Query, from, to string) {
	_ = eachClause(q, func(c bquery.Query) error {
		if f, ok := c.(bquery.FieldableQuery); ok && f.Field() == from {
			f.SetField(to)
		}
		return nil
	})
}

// exactKeywords turns quoted values of keyword fields (service:"Clone
// Bay") into plain matches: a keyword is one term, and bleve's phrases
// need term positions, which keyword fields do not keep.
func exactKeywords(q bquery.Query) bquery.Query {
	if rewriteChildren(q, exactKeywords) {
		return q
	}
	if c, ok := q.(*bquery.MatchPhraseQuery); ok {
		if f, ok := fieldNamed(c.FieldVal); ok && f.Type == indexer.Keyword && c.Fuzziness == 0 {
			m := bleve.NewMatchQuery(c.MatchPhrase)
			m.SetField(c.FieldVal)
			m.SetBoost(c.BoostVal.Value())
			return m
		}
	}
	return q
}

// rewriteChildren replaces, in place, each clause of a compound query
// (boolean, conjunction, disjunction) by f of it; it reports whether q is
// compound.
func rewriteChildren(q bquery.Query, f func(bquery.Query) bquery.Query) bool {
	switch c := q.(type) {
	case *bquery.BooleanQuery:
		for _, sub := range []*bquery.Query{&c.Must, &c.Should, &c.MustNot} {
			if *sub != nil {
				*sub = f(*sub)
			}
		}
	case *bquery.ConjunctionQuery:
		for i := range c.Conjuncts {
			c.Conjuncts[i] = f(c.Conjuncts[i])
		}
	case *bquery.DisjunctionQuery:
		for i := range c.Disjuncts {
			c.Disjuncts[i] = f(c.Disjuncts[i])
		}
	default:
		return false
	}
	return true
}

func fieldNamed(name string) (indexer.AnalystField, bool) {
	for _, f := range indexer.AnalystFields() {
		if f.Name == name {
			return f, true
		}
	}
	return indexer.AnalystField{}, false
}

// checkClauses finds what bleve checks only while it searches, or not at
// all, so that it is the analyst's error rather than a failed or empty
// search: fields no document of cats has; regexps that bleve's index would
// not compile (Go syntax, then the automaton's limits: no anchors, word
// boundaries or lazy repetition, a bounded size); fuzziness beyond bleve's
// maximum.
func checkClauses(q bquery.Query, cats []snapshots.Category) error {
	return eachClause(q, func(c bquery.Query) error {
		if f, ok := c.(bquery.FieldableQuery); ok && f.Field() != "" && f.Field() != indexer.DocIDField {
			if !slices.ContainsFunc(indexer.AnalystFields(), func(a indexer.AnalystField) bool { return a.Name == f.Field() && inCategories(a, cats) }) {
				return fmt.Errorf("no field %q; valid: %s", f.Field(), joinFields(cats))
			}
		}
		switch c := c.(type) {
		case *bquery.RegexpQuery:
			parsed, err := syntax.Parse(c.Regexp, syntax.Perl)
			if err == nil {
				_, err = vregexp.NewParsedWithLimit(c.Regexp, parsed, vregexp.DefaultLimit)
			}
			if err != nil {
				return fmt.Errorf("regular expression /%s/: %v", c.Regexp, err)
			}
		case *bquery.FuzzyQuery:
			return checkFuzziness(c.Term, c.Fuzziness)
		case *bquery.MatchQuery: // term~N in the query string
			return checkFuzziness(c.Match, c.Fuzziness)
		case *bquery.MatchPhraseQuery:
			return checkFuzziness(c.MatchPhrase, c.Fuzziness)
		}
		return nil
	})
}

func joinFields(cats []snapshots.Category) string {
	var names []string
	for _, f := range indexer.AnalystFields() {
		if inCategories(f, cats) {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, ", ")
}

func checkFuzziness(term string, n int) error {
	if n > searcher.MaxFuzziness {
		return fmt.Errorf("fuzziness %d of %q is more than %d", n, term, searcher.MaxFuzziness)
	}
	return nil
}

// constantScore reports whether no clause of q ranks its matches: only
// filters (prefixes, wildcards, regexps, ranges, keyword and numeric terms,
// everything) and no text match of the name fields.
func constantScore(q bquery.Query) bool {
	return eachClause(q, func(c bquery.Query) error {
		var field string
		switch c := c.(type) {
		case *bquery.MatchQuery:
			field = c.FieldVal
		case *bquery.MatchPhraseQuery:
			field = c.FieldVal
		case *bquery.TermQuery:
			field = c.FieldVal
		case *bquery.FuzzyQuery, *bquery.PhraseQuery, *bquery.QueryStringQuery:
			return errRanks
		default:
			return nil
		}
		if f, ok := fieldNamed(field); !ok || f.Type == indexer.Text {
			return errRanks // the default field (words) or a name field
		}
		return nil
	}) == nil
}

var errRanks = errors.New("a clause ranks")
