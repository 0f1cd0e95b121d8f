package analyst

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"gds/indexer"
	"gds/query"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
)

// Export formats of analysts' hits.
const (
	FormatJSON  = "json"  // one answer: hits, total, facets
	FormatCSV   = "csv"   // a header row, then a row per hit
	FormatJSONL = "jsonl" // a JSON object per hit, one a line
)

// Formats lists the formats an analyst can ask for.
var Formats = []string{FormatJSON, FormatCSV, FormatJSONL}

// ExportWriter writes an export's rows in one format as they stream.
type ExportWriter struct {
	w      *bufio.Writer
	csv    *csv.Writer
	enc    *json.Encoder
	fields []string
	rows   int
}

// NewExportWriter writes format (csv or jsonl) to w; Flush ends it.
func NewExportWriter(w io.Writer, format string) (*ExportWriter, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &ExportWriter{w: bw}
	switch format {
	case FormatCSV:
		e.csv = csv.NewWriter(bw)
	case FormatJSONL:
		e.enc = json.NewEncoder(bw)
	default:
		return nil, fmt.Errorf("%w: format %q cannot stream; valid: %s, %s", ErrBadQuery, format, FormatCSV, FormatJSONL)
	}
	return e, nil
}

// Start writes what comes before the rows: CSV's header (id, category,
// name, score, then the stored fields asked for).
func (e *ExportWriter) Start(fields []string) error {
	e.fields = fields
	if e.csv != nil {
		return e.csv.Write(append([]string{"id", "category", "name", "score"}, fields...))
	}
	return nil
}

// Row writes one hit. A CSV cell of a field with several values joins
// them with "|"; a missing field is empty.
func (e *ExportWriter) Row(h Hit) error {
	e.rows++
	if e.enc != nil {
		return e.enc.Encode(h)
	}
	rec := make([]string, 0, 4+len(e.fields))
	rec = append(rec, strconv.FormatInt(h.ID, 10), string(h.Category), h.Name, strconv.FormatFloat(h.Score, 'g', -1, 64))
	for _, f := range e.fields {
		rec = append(rec, cell(h.Fields[f]))
	}
	if err := e.csv.Write(rec); err != nil {
		return err
	}
	// Flush every so often so a client sees rows as they come.
	if e.rows%1000 == 0 {
		e.csv.Flush()
		return e.w.Flush()
	}
	return nil
}

// Rows counts the rows written.
func (e *ExportWriter) Rows() int { return e.rows }

// Flush writes what is buffered.
func (e *ExportWriter) Flush() error {
	if e.csv != nil {
		e.csv.Flush()
		if err := e.csv.Error(); err != nil {
			return err
		}
	}
	return e.w.Flush()
}

func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = cell(x)
		}
		return strings.Join(parts, "|")
	}
	return fmt.Sprint(v)
}

// ExportTooLargeError is returned by Export when a query matches more than
// it may stream and no limit was set: the message says what to do.
type ExportTooLargeError struct {
	Total uint64
	Cap   int
}

// Export streams req's hits to start and then row, page by page in req.Sort's
// order (ID order by default), at most req.Limit of them (at most
// MaxExportRows). start learns the total before any row; an unlimited
// request matching more than the cap fails with *ExportTooLargeError
// before start.
func (a *Engine) Export(ctx context.Context, req Request, start func(total uint64, columns []string) error, row func(Hit) error) error {
	p, err := prepare(req, true)
	if err != nil {
		return err
	}
	g, release := a.acquire()
	if g == nil {
		return query.ErrNotReady
	}
	defer release()
	defer g.UseIndexes()()
	if tables, others := tablesOnlyCategories(g, p.cats); len(tables) > 0 {
		return exportTables(ctx, g, p, tables, others, req, start, row)
	}
	idx, err := categoryIndexes(g, p.cats)
	if err != nil {
		return err
	}
	if idx == nil {
		return start(0, p.fields)
	}
	return exportBleve(ctx, g, p, idx, func(total uint64) error {
		if req.Limit == 0 && total > uint64(exportCap) {
			return wrapBad(&ExportTooLargeError{Total: total, Cap: exportCap})
		}
		return start(total, p.fields)
	}, row)
}

// exportBleve pages through p's hits in idx (p.sort's order, then ID
// order), at most p.limit of them: begin learns the total first.
func exportBleve(ctx context.Context, g *indexer.Generation, p *plan, idx bleve.Index, begin func(total uint64) error, row func(Hit) error) error {
	if err := rewriteNames(ctx, g, p); err != nil {
		return err
	}
	q := instantRanges(p.q)
	// A unique last key lets each page start after the one before.
	order := append(slices.Clone(p.sort), indexer.DocIDField)
	var after []string
	sent := 0
	for first := true; ; first = false {
		size := min(exportPage, p.limit-sent)
		sr := bleve.NewSearchRequestOptions(q, size, 0, false)
		sr.SortBy(order)
		if !slices.ContainsFunc(order, func(k string) bool { return strings.TrimPrefix(k, "-") == "_score" }) {
			sr.Score = "none" // an order without scores needs none
		}
		if after != nil {
			sr.SetSearchAfter(after)
		}
		out, err := idx.SearchInContext(ctx, sr)
		if err != nil {
			return fmt.Errorf("analysts' export: %w", err)
		}
		if first {
			if err := begin(out.Total); err != nil {
				return err
			}
		}
		for _, h := range out.Hits {
			hit, err := hitOf(g, h.ID, h.Index, h.Score, p.fields)
			if err != nil {
				return err
			}
			if err := row(hit); err != nil {
				return err
			}
		}
		sent += len(out.Hits)
		if len(out.Hits) < size || sent >= p.limit {
			return nil
		}
		after = out.Hits[len(out.Hits)-1].Sort
	}
}
