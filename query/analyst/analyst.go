// Package analyst answers analysts' queries over a generation: bleve's query
// string syntax, stored fields, sorting, facets and exports (CSV, JSON
// Lines), from the bleve shards of most categories and from the name tables
// and value columns of the categories without them (tables*.go), merged
// across categories (merge.go). Public name search is package query.
package analyst

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	bquery "github.com/blevesearch/bleve/v2/search/query"

	"gds/indexer"
	"gds/query"
	"gds/snapshots"
)

// Engine runs analysts' queries, in bleve's query string syntax, over the
// bleve indexes of a generation: hits with stored fields, sorting, facets
// and exports. It is safe for concurrent use.
type Engine struct {
	// acquire pins a generation (nil when none is live) until release.
	acquire func() (g *indexer.Generation, release func())
	close   func()
}

// New returns the analysts' queries over m's generation whose
// bleve shards are complete: the live one, or an earlier one while the
// live one's are still being built (answers say which).
func New(m *indexer.Manager) *Engine {
	return &Engine{
		acquire: func() (*indexer.Generation, func()) {
			g := m.AcquireAnalysts()
			if g == nil {
				return nil, nil
			}
			return g, g.Release
		},
		close: func() {},
	}
}

// On runs analysts' queries over g, which the caller holds.
func On(g *indexer.Generation) *Engine {
	return &Engine{acquire: func() (*indexer.Generation, func()) { return g, func() {} }, close: func() {}}
}

// Open opens the live generation of dataDir read-only, for tools
// such as gds query beside a running server (see indexer.OpenReadOnly).
// Close releases it.
func Open(dataDir string) (*Engine, error) {
	g, err := indexer.OpenReadOnly(dataDir)
	if err != nil {
		if errors.Is(err, indexer.ErrNoGeneration) {
			return nil, fmt.Errorf("%w: %v", query.ErrNotReady, err)
		}
		return nil, err
	}
	return &Engine{
		acquire: func() (*indexer.Generation, func()) { return g, func() {} },
		close:   g.Release,
	}, nil
}

// Close releases what Open opened.
func (a *Engine) Close() { a.close() }

// Limits of analysts' queries.
const (
	// DefaultLimit is the hits a query returns unless told.
	DefaultLimit = 20
	// MaxLimit bounds the hits of one JSON answer, so a query such
	// as name:* cannot make a server materialize millions of hits.
	MaxLimit = 1000
	// MaxExportRows is the hard cap of an export (CSV or JSON Lines),
	// which streams its rows page by page.
	MaxExportRows = 100000
	// DefaultFacetSize and MaxFacetSize bound a terms facet's buckets.
	DefaultFacetSize = 10
	MaxFacetSize     = 100
)

// exportPage is the hits an export fetches per search, and exportCap the
// most rows it sends (MaxExportRows; tests lower both).
var (
	exportPage = 5000
	exportCap  = MaxExportRows
)

// ErrBadQuery wraps every complaint about an analyst's request
// itself (query string, fields, facets, sort, limit), so an HTTP layer can
// answer 400 rather than 500.
var ErrBadQuery = errors.New("bad query")

// Request is one analyst's query.
type Request struct {
	// Query in bleve's query string syntax (name:jita, security:<0.45);
	// "*" alone matches every document.
	Query string
	// Category limits the query to one category; "" means all.
	Category snapshots.Category
	// Limit is the most hits: 1 to MaxLimit (MaxExportRows for an
	// export); 0 means DefaultLimit (the cap for an export).
	Limit int
	// Sort orders hits by these fields (stored ones, id, score; "-field"
	// descending). Empty means best score first, or index order when no
	// clause ranks (only filters: prefixes, wildcards, ranges, keywords);
	// an export's order is ID order.
	Sort []string
	// Fields are stored fields to return with each hit; "*" means every
	// stored field of the categories searched.
	Fields []string
	// Facets are stored fields to count hits by: terms of keywords and
	// booleans, fixed ranges of numbers and instants.
	Facets []string
	// FacetSize is the most terms per terms facet (default 10, at most 100).
	FacetSize int
}

// Hit is one document an analyst's query matched.
type Hit struct {
	ID       int64              `json:"id"`
	Category snapshots.Category `json:"category"`
	Name     string             `json:"name"`
	Score    float64            `json:"score"`
	// Fields holds the requested stored fields the document has.
	Fields map[string]any `json:"fields,omitempty"`
}

// Result is the answer to a Request.
type Result struct {
	Generation uint64             `json:"generation"`
	Query      string             `json:"query"`
	Category   snapshots.Category `json:"category,omitempty"`
	// Total counts every matching document, beyond the hits returned.
	Total  uint64        `json:"total"`
	TookMS float64       `json:"took_ms"`
	Hits   []Hit         `json:"hits"`
	Facets []FacetResult `json:"facets,omitempty"`
}

// FacetResult counts the hits of a query by one field.
type FacetResult struct {
	Field string            `json:"field"`
	Type  indexer.FieldType `json:"type"`
	// Total counts values seen, Missing documents without the field, Other
	// values beyond the terms returned.
	Total   int      `json:"total"`
	Missing int      `json:"missing"`
	Other   int      `json:"other"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket is one term or range of a facet and its count.
type Bucket struct {
	Term  string `json:"term"`
	Count int    `json:"count"`
}

// Fields lists every field of the analysts' documents.
func Fields() []indexer.AnalystField { return indexer.AnalystFields() }

// plan is an analyst request checked and turned into bleve's terms.
type plan struct {
	q        bquery.Query
	cats     []snapshots.Category
	sort     []string // bleve's spelling: _id, _score, -field
	fields   []string
	facets   []indexer.AnalystField
	facetMax int
	limit    int
	// unscored: no clause ranks (see constantScore) and no sort by score.
	unscored bool
}

// prepare checks req; every complaint wraps ErrBadQuery.
func prepare(req Request, export bool) (*plan, error) {
	bad := func(format string, args ...any) (*plan, error) {
		return nil, fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(req.Query) == "" {
		return bad("the query string is empty")
	}
	p := &plan{cats: snapshots.Categories, limit: req.Limit}
	if req.Category != "" {
		if !req.Category.Valid() {
			return bad("unknown category %q; valid: %s", req.Category, joinCategories())
		}
		p.cats = []snapshots.Category{req.Category}
	}
	maxLimit := MaxLimit
	if export {
		maxLimit = exportCap
	}
	var err error
	switch {
	case p.limit == 0 && export:
		p.limit = exportCap
	case p.limit == 0:
		p.limit = DefaultLimit
	case p.limit < 0 || p.limit > maxLimit:
		return bad("limit must be from 1 to %d, got %d", maxLimit, p.limit)
	}
	// Parse up front: bleve would otherwise report a syntax error only from
	// inside Search, indistinguishable from an index failure.
	var q bquery.Query
	if strings.TrimSpace(req.Query) == "*" {
		q = bleve.NewMatchAllQuery() // every document, without a wildcard's term walk
	} else if q, err = bleve.NewQueryStringQuery(req.Query).Parse(); err != nil {
		return bad("%v", err)
	}
	if err := checkClauses(q, p.cats); err != nil {
		return bad("%v", err)
	}
	renameField(q, indexer.FieldID, indexer.DocIDField)
	p.q = exactKeywords(q)
	p.unscored = constantScore(p.q)
	if msg := p.sortAndFields(req); msg != "" {
		return bad("%s", msg)
	}
	if len(req.Facets) > 0 && export {
		return bad("facets are not exported: ask for them as JSON")
	}
	for _, name := range req.Facets {
		f, ok := storedField(strings.TrimSpace(name), p.cats)
		if !ok {
			return bad("cannot facet on %q; valid: %s", name, joinStored(p.cats))
		}
		if !slices.ContainsFunc(p.facets, func(g indexer.AnalystField) bool { return g.Name == f.Name }) {
			p.facets = append(p.facets, f)
		}
	}
	p.facetMax = req.FacetSize
	switch {
	case p.facetMax == 0:
		p.facetMax = DefaultFacetSize
	case p.facetMax < 0 || p.facetMax > MaxFacetSize:
		return bad("facet size must be from 1 to %d, got %d", MaxFacetSize, p.facetMax)
	}
	return p, nil
}

// sortAndFields takes the request's sort keys and stored fields into p,
// or says what is wrong with them.
func (p *plan) sortAndFields(req Request) string {
	for _, s := range req.Sort {
		name, desc := strings.CutPrefix(strings.TrimSpace(s), "-")
		var key string
		switch name {
		case "score", "_score":
			key = "_score"
		case indexer.FieldID, indexer.DocIDField:
			key = indexer.DocIDField
		default:
			if _, ok := storedField(name, p.cats); !ok {
				return fmt.Sprintf("cannot sort by %q; valid: id, score, %s", name, joinStored(p.cats))
			}
			key = name
		}
		if desc {
			key = "-" + key
		}
		if key == "_score" || key == "-_score" {
			p.unscored = false
		}
		p.sort = append(p.sort, key)
	}
	for _, name := range req.Fields {
		name = strings.TrimSpace(name)
		if name == "*" {
			for _, f := range indexer.AnalystFields() {
				if f.Stored && inCategories(f, p.cats) && !slices.Contains(p.fields, f.Name) {
					p.fields = append(p.fields, f.Name)
				}
			}
			continue
		}
		if _, ok := storedField(name, p.cats); !ok {
			return fmt.Sprintf("no stored field %q to return; valid: *, %s", name, joinStored(p.cats))
		}
		if !slices.Contains(p.fields, name) {
			p.fields = append(p.fields, name)
		}
	}
	return ""
}

// Query runs req over the live generation: the best hits (or the first in
// req.Sort's order), their stored fields, the total and the facets.
func (a *Engine) Query(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	p, err := prepare(req, false)
	if err != nil {
		return nil, err
	}
	g, release := a.acquire()
	if g == nil {
		return nil, query.ErrNotReady
	}
	defer release()
	defer g.UseIndexes()()
	idx, err := categoryIndexes(g, p.cats)
	if err != nil {
		return nil, err
	}
	res := &Result{Generation: g.Meta.ID, Query: req.Query, Category: req.Category, Hits: []Hit{}}
	tables, others := tablesOnlyCategories(g, p.cats)
	if np, ok := nameOnly(p, g.HasColumns()); ok {
		if err := a.queryNames(ctx, g, p, np, res); err != nil {
			return nil, err
		}
	} else if len(tables) > 0 {
		if err := queryTables(ctx, g, p, tables, others, res); err != nil {
			return nil, err
		}
	} else if idx != nil {
		out, err := bleveSearch(ctx, g, p, idx)
		if err != nil {
			return nil, err
		}
		res.Total = out.Total
		for _, h := range out.Hits {
			hit, err := hitOf(g, h.ID, h.Index, h.Score, p.fields)
			if err != nil {
				return nil, err
			}
			res.Hits = append(res.Hits, hit)
		}
		for _, f := range p.facets {
			res.Facets = append(res.Facets, facetResult(f, out.Facets[f.Name]))
		}
	} else {
		for _, f := range p.facets {
			res.Facets = append(res.Facets, FacetResult{Field: f.Name, Type: f.Type, Buckets: []Bucket{}})
		}
	}
	res.TookMS = float64(time.Since(start).Microseconds()) / 1000
	return res, nil
}

// bleveSearch runs p over idx (the bleve indexes of its categories): the
// first p.limit hits, the total and the facets.
func bleveSearch(ctx context.Context, g *indexer.Generation, p *plan, idx bleve.Index) (*bleve.SearchResult, error) {
	if err := rewriteNames(ctx, g, p); err != nil {
		return nil, err
	}
	q := instantRanges(p.q)
	sr := bleve.NewSearchRequestOptions(q, p.limit, 0, false)
	if len(p.sort) > 0 {
		sr.SortBy(p.sort)
	}
	if p.unscored {
		// Nothing to rank by: bleve then ORs posting bitmaps instead of
		// scoring every match (a prefix over 10M names matches many
		// terms), and keeps the first hits in index order.
		sr.Score = "none"
	}
	now := time.Now()
	for _, f := range p.facets {
		sr.AddFacet(f.Name, facetRequest(f, p.facetMax, now))
	}
	out, err := idx.SearchInContext(ctx, sr)
	if err != nil {
		return nil, fmt.Errorf("analysts' query: %w", err)
	}
	return out, nil
}

func (e *ExportTooLargeError) Error() string {
	return fmt.Sprintf("the query matches %d documents, more than the export cap of %d: narrow the query, or set a limit (at most %d) to export the first ones in sort order",
		e.Total, e.Cap, e.Cap)
}

// errExportDone stops an export's paging once it has sent its rows.
var errExportDone = errors.New("export complete")

// ignoreDone is err, unless it only says an export is complete.
func ignoreDone(err error) error {
	if errors.Is(err, errExportDone) {
		return nil
	}
	return err
}

// wrapBad makes err an analyst's error.
func wrapBad(err error) error {
	if errors.Is(err, ErrBadQuery) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrBadQuery, err)
}

// categoryIndexes is one index over the categories' bleve indexes (nil
// when none has records); bleve's alias merges their hits, sorts and facets.
func categoryIndexes(g *indexer.Generation, cats []snapshots.Category) (bleve.Index, error) {
	var idxs []bleve.Index
	for _, cat := range cats {
		idx, err := g.Index(cat)
		if err != nil {
			return nil, fmt.Errorf("analysts' query: %w", err)
		}
		if idx != nil {
			idxs = append(idxs, &namedIndex{bleveIndex: idx, cat: cat})
		}
	}
	switch len(idxs) {
	case 0:
		return nil, nil
	case 1:
		return idxs[0], nil
	}
	return bleve.NewIndexAlias(idxs...), nil
}

// namedIndex names a category's index by its category, so every hit says
// which category it came from (bleve's DocumentMatch.Index).
type namedIndex struct {
	bleveIndex
	cat snapshots.Category
}

// bleveIndex lets namedIndex embed bleve.Index, whose own Index method
// would clash with a field named Index.
type bleveIndex = bleve.Index

func (n *namedIndex) Name() string { return string(n.cat) }

func (n *namedIndex) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	res, err := n.bleveIndex.SearchInContext(ctx, req)
	if err == nil {
		for _, h := range res.Hits {
			h.Index = string(n.cat)
		}
	}
	return res, err
}

// hitOf makes a bleve hit a Hit, with the record's name and the
// fields named from the generation's record store (the bleve index
// stores neither).
func hitOf(g *indexer.Generation, docID, cat string, score float64, fields []string) (Hit, error) {
	id, err := strconv.ParseInt(docID, 10, 64)
	if err != nil {
		return Hit{}, fmt.Errorf("analysts' query: document id %q is not an integer", docID)
	}
	c := snapshots.Category(cat)
	h := Hit{ID: id, Category: c, Score: score}
	rec, err := query.RecordOf(g, c.Kind(), id)
	if err != nil {
		return h, nil // a damaged record: the hit without its name
	}
	h.Name = rec.(snapshots.Named).DisplayName()
	if len(fields) == 0 {
		return h, nil
	}
	if values := g.FieldValues(rec, fields); len(values) > 0 {
		for name, v := range values {
			if isIDField(name) {
				values[name] = idValues(v)
			}
		}
		h.Fields = values
	}
	return h, nil
}

// isIDField reports whether a keyword field holds IDs, which answers give
// as numbers, as ESI does.
func isIDField(name string) bool {
	return strings.HasSuffix(name, "_id") || name == "owner"
}

func idValues(v any) any {
	switch v := v.(type) {
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case []any:
		for i := range v {
			v[i] = idValues(v[i])
		}
	}
	return v
}

// storedField finds a stored field that documents of one of cats have.
func storedField(name string, cats []snapshots.Category) (indexer.AnalystField, bool) {
	for _, f := range indexer.AnalystFields() {
		if f.Name == name && f.Stored && inCategories(f, cats) {
			return f, true
		}
	}
	return indexer.AnalystField{}, false
}

func inCategories(f indexer.AnalystField, cats []snapshots.Category) bool {
	if len(f.Categories) == 0 {
		return true
	}
	for _, c := range cats {
		if slices.Contains(f.Categories, c) {
			return true
		}
	}
	return false
}

func joinStored(cats []snapshots.Category) string {
	var names []string
	for _, f := range indexer.AnalystFields() {
		if f.Stored && inCategories(f, cats) {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, ", ")
}

func joinCategories() string {
	var names []string
	for _, c := range snapshots.Categories {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}
