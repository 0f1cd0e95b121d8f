package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"gds/api/admin"
	"gds/indexer"
	"gds/snapshots"
)

func init() {
	register("query", "run an analyst's bleve query string over the live generation", runQuery)
}

// runQuery opens the live generation read-only and runs a bleve query
// string over it. It changes nothing in the data directory, so it is safe
// beside a running gds serve: bleve's read-only open takes shared locks.
func runQuery(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "query", "--data DIR [--category C] [--limit N] [--json] 'BLEVE QUERY STRING'\n\n"+
		"Fields: name (whole folded name: name:jita, name:*forge*), words (words: words:navy),\n"+
		"name_de … name_zh (localized names), id (exact: id:30000142), access (structures:\n"+
		"characters that may access them). Example: gds query --data .gds-data '+words:navy -words:amarr'")
	data := fs.String("data", "", "data directory holding the index generations")
	category := fs.String("category", "", "search one category only (e.g. solar_system); default all")
	limit := fs.Int("limit", admin.DefaultQueryLimit, fmt.Sprintf("most hits to print (1 to %d)", indexer.MaxAnalystLimit))
	asJSON := fs.Bool("json", false, "print JSON (the shape of GET /admin/query) instead of a table")
	positional, err := parseFlags(env, fs, args)
	if err != nil {
		return err
	}
	if *data == "" {
		return errors.New("query: --data is required (or GDS_DATA)")
	}
	// Unquoted words arrive as several arguments; bleve joins clauses with
	// spaces anyway.
	q := strings.TrimSpace(strings.Join(positional, " "))
	if q == "" {
		fs.Usage()
		return errUsage
	}
	if *limit < 1 || *limit > indexer.MaxAnalystLimit {
		return fmt.Errorf("query: --limit must be from 1 to %d, got %d", indexer.MaxAnalystLimit, *limit)
	}
	g, err := indexer.OpenReadOnly(*data)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer g.Release()
	cat := snapshots.Category(*category)
	hits, err := g.Query(ctx, q, cat, *limit)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if *asJSON {
		if hits == nil {
			hits = []indexer.AnalystHit{}
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(admin.QueryResponse{Generation: g.Meta.ID, Query: q, Category: cat, Hits: hits})
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCATEGORY\tNAME\tSCORE")
	for _, h := range hits {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\n", h.ID, h.Category, h.Name, h.Score)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%s (limit %d) in generation %d\n", plural(len(hits), "hit", "hits"), *limit, g.Meta.ID)
	return nil
}

// plural words a count: "1 hit", "2 hits".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
