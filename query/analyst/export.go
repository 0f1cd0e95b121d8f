package analyst

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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
