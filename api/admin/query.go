package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"gds/api/httplog"
	"gds/query"
	"gds/query/analyst"
	"gds/snapshots"
)

// queryParams are the parameters of GET /admin/query.
var queryParams = []string{"q", "category", "limit", "sort", "fields", "facets", "facet_size", "format"}

// AnalystRequest reads an analyst's request from URL parameters (those of
// GET /admin/query; gds query's flags mean the same) and the format asked
// for; the error names what to fix.
func AnalystRequest(get func(string) string) (analyst.Request, string, error) {
	list := func(s string) []string {
		var out []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	req := analyst.Request{
		Query:    strings.TrimSpace(get("q")),
		Category: snapshots.Category(get("category")),
		Sort:     list(get("sort")),
		Fields:   list(get("fields")),
		Facets:   list(get("facets")),
	}
	if req.Query == "" {
		return req, "", errors.New("Parameter q is required: a bleve query string such as name:jita, words:navy or security:<0.45 (* matches everything)")
	}
	for _, p := range []struct {
		name string
		dst  *int
		max  int
	}{{"limit", &req.Limit, analyst.MaxExportRows}, {"facet_size", &req.FacetSize, analyst.MaxFacetSize}} {
		if s := get(p.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > p.max {
				return req, "", fmt.Errorf("Parameter %s must be an integer from 1 to %d", p.name, p.max)
			}
			*p.dst = n
		}
	}
	format := get("format")
	if format == "" {
		format = analyst.FormatJSON
	}
	if !slices.Contains(analyst.Formats, format) {
		return req, "", fmt.Errorf("Parameter format must be one of %s", strings.Join(analyst.Formats, ", "))
	}
	return req, format, nil
}

func (h *handler) analysts(c *gin.Context) *analyst.Engine {
	if h.o.Analysts == nil {
		writeError(c, http.StatusServiceUnavailable, "Analysts' queries are not available on this server")
	}
	return h.o.Analysts
}

// query answers GET /admin/query: JSON (hits, total, facets) or, with
// format=csv or jsonl, every hit streamed up to the export cap.
func (h *handler) query(c *gin.Context) {
	for name := range c.Request.URL.Query() {
		if !slices.Contains(queryParams, name) {
			writeError(c, http.StatusBadRequest, fmt.Sprintf("Unknown parameter %q; valid: %s", name, strings.Join(queryParams, ", ")))
			return
		}
	}
	req, format, err := AnalystRequest(c.Query)
	if err != nil {
		writeError(c, http.StatusBadRequest, err.Error())
		return
	}
	a := h.analysts(c)
	if a == nil {
		return
	}
	ctx, done, ok := h.bounds.start(c)
	if !ok {
		return
	}
	defer done()
	if format != analyst.FormatJSON {
		lowPriority(func() { h.export(ctx, c, a, req, format) })
		return
	}
	var res *analyst.Result
	lowPriority(func() { res, err = a.Query(ctx, req) })
	if h.queryFailed(c, timedOut(ctx, err)) {
		return
	}
	c.JSON(http.StatusOK, res)
}

// queryFailed answers a failed query: 400 for the analyst's mistakes, 503
// before a generation, 504 past --analyst-timeout, 500 otherwise (logged).
func (h *handler) queryFailed(c *gin.Context, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, analyst.ErrBadQuery):
		writeError(c, http.StatusBadRequest, err.Error())
	case errors.Is(err, errAnalystTimeout):
		writeError(c, http.StatusGatewayTimeout, fmt.Sprintf(
			"The query ran longer than %v (--analyst-timeout) and was stopped: narrow it (a category, fewer facets, a prefix rather than a leading wildcard)",
			h.bounds.timeout))
	case errors.Is(err, query.ErrNotReady):
		msg := "No index generation is live yet"
		if p := h.o.Indexer.Status().Parts; p.Search != 0 {
			msg = fmt.Sprintf("The analysts' indexes of generation %d are not live yet (%s) and no earlier generation has them; searches already answer from it", p.Search, p.Bleve)
		}
		writeError(c, http.StatusServiceUnavailable, msg)
	default:
		h.o.Logger.Error().Err(err).Str("request_id", httplog.RequestID(c)).Msg("analyst query failed")
		writeError(c, http.StatusInternalServerError, "Query failed: "+err.Error())
	}
	return true
}

// export streams the hits as CSV or JSON Lines. Mistakes are found before
// the first byte (a JSON error with its status); a failure mid-stream can
// only cut the response short, so it is logged and the connection ends
// without the final chunk.
func (h *handler) export(ctx context.Context, c *gin.Context, a *analyst.Engine, req analyst.Request, format string) {
	w, err := analyst.NewExportWriter(c.Writer, format)
	if h.queryFailed(c, err) {
		return
	}
	started := false
	err = a.Export(ctx, req, func(total uint64, fields []string) error {
		started = true
		ct := "text/csv; charset=utf-8"
		if format == analyst.FormatJSONL {
			ct = "application/x-ndjson"
		}
		c.Header("Content-Type", ct)
		c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="gds-query.%s"`, format))
		c.Header("X-Total-Hits", strconv.FormatUint(total, 10))
		c.Status(http.StatusOK)
		return w.Start(fields)
	}, w.Row)
	err = timedOut(ctx, err)
	if !started {
		h.queryFailed(c, err)
		return
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		h.o.Logger.Error().Err(err).Str("request_id", httplog.RequestID(c)).Int("rows", w.Rows()).Msg("analyst export cut short")
		// The client must not take a cut export for a whole one: end the
		// connection without the final chunk.
		if conn, _, herr := c.Writer.Hijack(); herr == nil {
			conn.Close()
		}
	}
}

// fields answers GET /admin/fields: every field of the analysts' documents,
// the categories, the formats and the limits, for the console and scripts.
func (h *handler) fields(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{
		"fields":     analyst.Fields(),
		"categories": snapshots.Categories,
		"formats":    analyst.Formats,
		"limits": gin.H{"default": analyst.DefaultLimit, "json": analyst.MaxLimit, "export": analyst.MaxExportRows,
			"facet_size": analyst.MaxFacetSize},
	})
}
