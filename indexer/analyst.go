package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"

	"regexp/syntax"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	vregexp "github.com/blevesearch/vellum/regexp"

	"gds/snapshots"
)

// AnalystHit is one document an analyst's query matched.
type AnalystHit struct {
	ID       int64              `json:"id"`
	Category snapshots.Category `json:"category"`
	Name     string             `json:"name"`
	Score    float64            `json:"score"`
}

// MaxAnalystLimit bounds the hits one analyst query returns, so a query
// such as name:* cannot make a server materialize millions of hits.
const MaxAnalystLimit = 1000

// ErrBadQuery wraps every complaint about the query string itself, so an
// HTTP layer can answer 400 rather than 500.
var ErrBadQuery = errors.New("bad query")

// Query runs queryString, in bleve's query string syntax (name:jita,
// words:navy -id:1000084, name:*forge*; see mapping.go for the fields),
// over category's index, or over every category when category is "". Hits
// come best first (score, then category, then ID), at most limit of them.
func (g *Generation) Query(ctx context.Context, queryString string, category snapshots.Category, limit int) ([]AnalystHit, error) {
	if queryString == "" {
		return nil, fmt.Errorf("%w: the query string is empty", ErrBadQuery)
	}
	if limit <= 0 {
		return nil, fmt.Errorf("%w: limit must be positive, got %d", ErrBadQuery, limit)
	}
	limit = min(limit, MaxAnalystLimit)
	// Parse up front: bleve would otherwise report a syntax error only from
	// inside Search, indistinguishable from an index failure.
	q, err := bleve.NewQueryStringQuery(queryString).Parse()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	if err := checkClauses(q); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	renameField(q, FieldID, docIDField)
	defer g.useIndexes()()
	cats := snapshots.Categories
	if category != "" {
		if !category.Valid() {
			return nil, fmt.Errorf("%w: unknown category %q", ErrBadQuery, category)
		}
		cats = []snapshots.Category{category}
	}
	var hits []AnalystHit
	for _, cat := range cats {
		idx, err := g.Index(cat)
		if err != nil {
			return nil, fmt.Errorf("query %w", err)
		}
		if idx == nil {
			continue // the snapshot had no records of this category
		}
		req := bleve.NewSearchRequestOptions(q, limit, 0, false)
		res, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", cat, err)
		}
		for _, h := range res.Hits {
			id, err := strconv.ParseInt(h.ID, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("query %s: document id %q is not an integer", cat, h.ID)
			}
			name := g.displayName(cat, id)
			hits = append(hits, AnalystHit{ID: id, Category: cat, Name: name, Score: h.Score})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.ID < b.ID
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// docIDField is the field under which bleve indexes every document's _id
// (the record ID in decimal); the analysts' id field is another name for it.
const docIDField = "_id"

// eachClause calls fn with every clause of q, however deeply the clauses
// nest, until fn returns an error.
func eachClause(q query.Query, fn func(query.Query) error) error {
	var subs []query.Query
	switch q := q.(type) {
	case *query.BooleanQuery:
		subs = []query.Query{q.Must, q.Should, q.MustNot}
	case *query.ConjunctionQuery:
		subs = q.Conjuncts
	case *query.DisjunctionQuery:
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
func renameField(q query.Query, from, to string) {
	_ = eachClause(q, func(c query.Query) error {
		if f, ok := c.(query.FieldableQuery); ok && f.Field() == from {
			f.SetField(to)
		}
		return nil
	})
}

// checkClauses finds what bleve checks only while it searches, so that a
// bad regular expression or fuzziness is the analyst's error rather than
// a failed search: regexps compile as bleve's index compiles them (Go
// syntax, then the automaton's limits: no anchors, word boundaries or lazy
// repetition, a bounded size), and fuzziness is at most bleve's maximum.
func checkClauses(q query.Query) error {
	return eachClause(q, func(c query.Query) error {
		switch c := c.(type) {
		case *query.RegexpQuery:
			parsed, err := syntax.Parse(c.Regexp, syntax.Perl)
			if err == nil {
				_, err = vregexp.NewParsedWithLimit(c.Regexp, parsed, vregexp.DefaultLimit)
			}
			if err != nil {
				return fmt.Errorf("regular expression /%s/: %v", c.Regexp, err)
			}
		case *query.FuzzyQuery:
			return checkFuzziness(c.Term, c.Fuzziness)
		case *query.MatchQuery: // term~N in the query string
			return checkFuzziness(c.Match, c.Fuzziness)
		case *query.MatchPhraseQuery:
			return checkFuzziness(c.MatchPhrase, c.Fuzziness)
		}
		return nil
	})
}

func checkFuzziness(term string, n int) error {
	if n > searcher.MaxFuzziness {
		return fmt.Errorf("fuzziness %d of %q is more than %d", n, term, searcher.MaxFuzziness)
	}
	return nil
}

// OpenReadOnly opens the live generation of dataDir for reading only, for
// tools such as gds query that run beside a server on the same data
// directory. Unlike Open it changes nothing on disk: it neither removes
// unfinished builds nor retired generations, and bleve opens the shards
// with read_only (a shared lock), so any number of processes may hold the
// same generation. The caller must Release the generation.
func OpenReadOnly(dataDir string) (*Generation, error) {
	m := &Manager{opts: Options{DataDir: dataDir}}
	var lastErr error
	// A server may switch generations and delete the old one between our
	// reading CURRENT and opening it; then CURRENT has moved on, so retry.
	for range 3 {
		id, err := m.readCurrent()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", dataDir, ErrNoGeneration)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading %s: %w", dataDir, currentFile, err)
		}
		g, err := openGeneration(generationDir(dataDir, id), 0) // a tool's short-lived handle
		if err == nil {
			// Open every bleve index now, while the generation is
			// certainly there: a server may delete it once it moves on.
			if err = g.openIndexes(); err == nil {
				return g, nil
			}
			g.Release()
		}
		lastErr = err
		if again, rerr := m.readCurrent(); rerr == nil && again == id {
			break // not a race: the generation itself is unreadable
		}
	}
	return nil, lastErr
}

// UnfinishedBuilds lists the directories of builds in dataDir that have
// not completed: builds running now, in this or another process, or left
// over from a crash (Open removes those). Read-only.
func UnfinishedBuilds(dataDir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dataDir, generationsIn, "*"+buildingExt))
}

// displayName is a record's name as the snapshot spells it, from the
// record store (the bleve index stores nothing).
func (g *Generation) displayName(cat snapshots.Category, id int64) string {
	s := g.Store(cat.Kind())
	if s == nil {
		return ""
	}
	raw, ok := s.Get(id)
	if !ok {
		return ""
	}
	var rec struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &rec)
	return rec.Name
}
