package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"gds/query/analyst"
	"gds/snapshots"
)

func init() {
	register("query", "run an analyst's bleve query string over the live generation", runQuery)
}

const querySynopsis = "--data DIR [--category C] [--limit N] [--fields F,..] [--facets F,..] [--sort [-]F,..]\n" +
	"       [--format table|json|csv|jsonl] 'BLEVE QUERY STRING'\n" +
	"   or: gds query --fields        (every field, its type and an example)\n\n" +
	"Fields: name (whole folded name: name:jita, name:kari*, name:*forge*), words (words: words:navy),\n" +
	"id (id:30000142), and per category keywords, numbers and dates: security:<0.45,\n" +
	"member_count:>=100, birthday:>=\"2020-01-01\", state:armor_reinforce. * alone matches everything.\n" +
	"Example: gds query --data .gds-data --category structure --facets state,region_id '*'"

// runQuery opens the live generation read-only and runs a bleve query
// string over it. It changes nothing in the data directory, so it is safe
// beside a running gds serve: bleve's read-only open takes shared locks.
func runQuery(ctx context.Context, env *Env, args []string) error {
	// "gds query --fields" with nothing after it documents the fields.
	if n := len(args); n > 0 && (args[n-1] == "--fields" || args[n-1] == "-fields") {
		return printFields(env.Stdout)
	}
	fs := newFlags(env, "query", querySynopsis)
	data := fs.String("data", "", "data directory holding the index generations")
	category := fs.String("category", "", "search one category only (e.g. solar_system); default all")
	limit := fs.Int("limit", 0, fmt.Sprintf("most hits: default %d (table, json; at most %d), every hit up to %d for csv and jsonl",
		analyst.DefaultLimit, analyst.MaxLimit, analyst.MaxExportRows))
	fields := fs.String("fields", "", "stored fields to print with each hit, comma-separated, or * (alone: list every field)")
	facets := fs.String("facets", "", "stored fields to count the hits by, comma-separated (terms, or fixed ranges of numbers and dates)")
	sortBy := fs.String("sort", "", "order hits by these fields (stored ones, id, score); -field for descending")
	facetSize := fs.Int("facet-size", 0, fmt.Sprintf("most terms per terms facet (default %d, at most %d)", analyst.DefaultFacetSize, analyst.MaxFacetSize))
	format := fs.String("format", "table", "table, json (the shape of GET /admin/query), csv or jsonl (every hit, streamed)")
	asJSON := fs.Bool("json", false, "same as --format json")
	var timeout time.Duration
	addAnalystTimeoutFlag(fs, &timeout)
	positional, err := parseFlags(env, fs, args)
	if err != nil {
		return err
	}
	if err := requireFlags(fs, "data"); err != nil {
		return err
	}
	if *asJSON {
		*format = analyst.FormatJSON
	}
	if *format != "table" && !slices.Contains(analyst.Formats, *format) {
		return fmt.Errorf("query: --format must be table, %s; got %q", strings.Join(analyst.Formats, ", "), *format)
	}
	// Unquoted words arrive as several arguments; bleve joins clauses with
	// spaces anyway.
	q := strings.TrimSpace(strings.Join(positional, " "))
	if q == "" {
		fs.Usage()
		return errUsage
	}
	if *limit < 0 {
		return fmt.Errorf("query: --limit must be positive, got %d", *limit)
	}
	req := analyst.Request{Query: q, Category: snapshots.Category(*category), Limit: *limit,
		Fields: splitList(*fields), Facets: splitList(*facets), Sort: splitList(*sortBy), FacetSize: *facetSize}
	a, err := analyst.Open(*data)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer a.Close()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("ran longer than --analyst-timeout %v and was stopped: narrow it, or raise --analyst-timeout", timeout))
		defer cancel()
	}
	return analystTimedOut(ctx, runAnalyst(ctx, env, a, req, *format))
}

// analystTimedOut is err, or why the query was stopped when its time ran
// out (whatever error the engine made of that).
func analystTimedOut(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("query: %w", context.Cause(ctx))
	}
	return err
}

// runAnalyst runs req and prints its answer in format.
func runAnalyst(ctx context.Context, env *Env, a *analyst.Engine, req analyst.Request, format string) error {
	if format == analyst.FormatCSV || format == analyst.FormatJSONL {
		return exportQuery(ctx, env, a, req, format)
	}
	res, err := a.Query(ctx, req)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if format == analyst.FormatJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if err := printHits(env.Stdout, res, req.Fields); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%d of %s in %.1f ms, generation %d\n", len(res.Hits), plural(int(res.Total), "hit", "hits"), res.TookMS, res.Generation)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// exportQuery streams every hit as CSV or JSON Lines to stdout.
func exportQuery(ctx context.Context, env *Env, a *analyst.Engine, req analyst.Request, format string) error {
	w, err := analyst.NewExportWriter(env.Stdout, format)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	var total uint64
	err = a.Export(ctx, req, func(n uint64, fields []string) error { total = n; return w.Start(fields) }, w.Row)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	fmt.Fprintf(env.Stderr, "%d of %d hits exported as %s\n", w.Rows(), total, format)
	return nil
}

// printHits prints the hits as a table, then each facet with bars.
func printHits(out io.Writer, res *analyst.Result, fields []string) error {
	if slices.Contains(fields, "*") {
		fields = nil
		for _, h := range res.Hits {
			for name := range h.Fields {
				if !slices.Contains(fields, name) {
					fields = append(fields, name)
				}
			}
		}
		slices.Sort(fields)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := append([]string{"ID", "CATEGORY", "NAME", "SCORE"}, fields...)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, h := range res.Hits {
		row := []string{fmt.Sprint(h.ID), string(h.Category), h.Name, fmt.Sprintf("%.4f", h.Score)}
		for _, f := range fields {
			row = append(row, cellText(h.Fields[f]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range res.Facets {
		fmt.Fprintf(out, "\n%s (%s): %d values, %d without, %d in other terms\n", f.Field, f.Type, f.Total, f.Missing, f.Other)
		most := 1
		for _, b := range f.Buckets {
			most = max(most, b.Count)
		}
		for _, b := range f.Buckets {
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", b.Term, b.Count, strings.Repeat("█", (b.Count*40+most-1)/most))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func cellText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, "|")
	}
	return fmt.Sprint(v)
}

// printFields documents every field of the analysts' documents.
func printFields(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIELD\tTYPE\tSTORED\tCATEGORIES\tWHAT IT HOLDS\tEXAMPLE")
	for _, f := range analyst.Fields() {
		cats := "all"
		if len(f.Categories) > 0 {
			var names []string
			for _, c := range f.Categories {
				names = append(names, string(c))
			}
			cats = strings.Join(names, ",")
		}
		stored := "-"
		if f.Stored {
			stored = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, f.Type, stored, cats, f.About, f.Example)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nStored fields can be returned (--fields), sorted on (--sort) and counted (--facets).")
	fmt.Fprintln(out, "keyword: field:value, field:prefix*; numeric: field:>=N, field:<N, field:N; datetime: field:>=\"2024-01-01\".")
	return nil
}

// plural words a count: "1 hit", "2 hits".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
