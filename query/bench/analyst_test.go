//go:build bench

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"gds/query/analyst"
	"gds/snapshots"
)

// The analysts' query set: bleve through analyst.Engine (a warm, read-only
// open of the generation, as gds query or a server's /admin/query run it)
// beside the equivalent SQL on the same records in the same PostgreSQL.

// analystQuery is one query of the set, with its SQL equivalent.
type analystQuery struct {
	Class string
	Req   analyst.Request
	// SQL counts what Req matches (the facet class runs each of Group).
	SQL   string
	Group []string
	Want  uint64 // PostgreSQL's count
	Got   uint64 // gds's total
}

// analystResult is what the analysts' set measured.
type analystResult struct {
	Queries    []analystQuery
	GDS, PG    map[string]Timing
	Load       time.Duration // PostgreSQL: the analysts' tables and indexes
	Mismatches int
	Err        error
}

// analystClasses in the order the table prints them.
var analystClasses = []string{"prefix", "wildcard", "term", "range", "daterange", "facets"}

// analystBench loads the analysts' tables into PostgreSQL, makes the query
// set from the data, checks gds's totals against PostgreSQL's counts and
// times both, one client each.
func analystBench(ctx context.Context, conn *pgx.Conn, snap *snapshots.Snapshot, data string, names []string, minTime time.Duration, maxPasses int) analystResult {
	var r analystResult
	t0 := time.Now()
	if r.Err = loadAnalystTables(ctx, conn, snap); r.Err != nil {
		return r
	}
	r.Load = time.Since(t0)
	if r.Queries, r.Err = analystQueries(ctx, conn, names); r.Err != nil {
		return r
	}
	for i := range r.Queries {
		if r.Err = pgAnalyst(ctx, conn, &r.Queries[i]); r.Err != nil {
			return r
		}
	}
	a, err := analyst.Open(data)
	if err != nil {
		r.Err = err
		return r
	}
	defer a.Close()
	// Warm: every query once (opens the shards, fills the page cache), and
	// the totals checked against PostgreSQL's counts.
	for i := range r.Queries {
		res, err := a.Query(ctx, r.Queries[i].Req)
		if err != nil {
			r.Err = fmt.Errorf("%s %q: %w", r.Queries[i].Class, r.Queries[i].Req.Query, err)
			return r
		}
		r.Queries[i].Got = res.Total
		if res.Total != r.Queries[i].Want {
			r.Mismatches++
		}
	}
	r.GDS, r.PG = map[string]Timing{}, map[string]Timing{}
	for _, class := range analystClasses {
		var idx []int
		for i, q := range r.Queries {
			if q.Class == class {
				idx = append(idx, i)
			}
		}
		r.GDS[class] = runTimed(len(idx), 1, minTime, maxPasses, func(_, i int) error {
			_, err := a.Query(ctx, r.Queries[idx[i]].Req)
			return err
		})
		r.PG[class] = runTimed(len(idx), 1, minTime, maxPasses, func(_, i int) error {
			q := r.Queries[idx[i]]
			return pgAnalyst(ctx, conn, &q)
		})
	}
	return r
}

// loadAnalystTables copies what the set asks about into PostgreSQL, with
// the indexes an analyst would make: btree text_pattern_ops for prefixes
// (the names table's trigram GIN serves wildcards), btrees on the filtered
// columns; the structures' region is derived as gds derives it.
func loadAnalystTables(ctx context.Context, conn *pgx.Conn, snap *snapshots.Snapshot) error {
	for _, sql := range []string{
		`CREATE UNLOGGED TABLE a_characters (id bigint, corporation_id bigint, birthday timestamptz)`,
		`CREATE UNLOGGED TABLE a_corporations (id bigint, member_count bigint)`,
		`CREATE UNLOGGED TABLE a_structures (id bigint, state text, region_id bigint)`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	region := map[int64]int64{}
	constellation := map[int64]int64{}
	for _, k := range []snapshots.Kind{snapshots.Constellations, snapshots.SolarSystems} {
		if err := snap.Each(k, func(rec snapshots.Record, _ snapshots.Line) error {
			switch r := rec.(type) {
			case *snapshots.Constellation:
				region[r.ID] = r.RegionID
			case *snapshots.SolarSystem:
				constellation[r.ID] = r.ConstellationID
			}
			return nil
		}); err != nil {
			return err
		}
	}
	copyKind := func(k snapshots.Kind, table string, cols []string, row func(snapshots.Record) []any) error {
		src := &recordSource{rows: make(chan []any, 4096)}
		go func() {
			defer close(src.rows)
			src.err = snap.Each(k, func(rec snapshots.Record, _ snapshots.Line) error {
				src.rows <- row(rec)
				return nil
			})
		}()
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, cols, src); err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
		return src.err
	}
	if err := copyKind(snapshots.Characters, "a_characters", []string{"id", "corporation_id", "birthday"}, func(rec snapshots.Record) []any {
		c := rec.(*snapshots.Character)
		return []any{c.ID, c.CorporationID, c.Birthday}
	}); err != nil {
		return err
	}
	if err := copyKind(snapshots.Corporations, "a_corporations", []string{"id", "member_count"}, func(rec snapshots.Record) []any {
		c := rec.(*snapshots.Corporation)
		return []any{c.ID, c.MemberCount}
	}); err != nil {
		return err
	}
	if err := copyKind(snapshots.Structures, "a_structures", []string{"id", "state", "region_id"}, func(rec snapshots.Record) []any {
		s := rec.(*snapshots.Structure)
		return []any{s.ID, s.State, region[constellation[s.SystemID]]}
	}); err != nil {
		return err
	}
	for _, sql := range []string{
		`CREATE INDEX names_prefix ON names (lower(name) text_pattern_ops)`,
		`CREATE INDEX a_characters_corp ON a_characters (corporation_id)`,
		`CREATE INDEX a_characters_birthday ON a_characters (birthday)`,
		`CREATE INDEX a_corporations_members ON a_corporations (member_count)`,
		`VACUUM ANALYZE names`, `VACUUM ANALYZE a_characters`, `VACUUM ANALYZE a_corporations`, `VACUUM ANALYZE a_structures`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// recordSource feeds COPY from a goroutine reading the snapshot.
type recordSource struct {
	rows chan []any
	cur  []any
	err  error
}

func (s *recordSource) Next() bool {
	r, ok := <-s.rows
	s.cur = r
	return ok
}
func (s *recordSource) Values() ([]any, error) { return s.cur, nil }
func (s *recordSource) Err() error             { return nil }

// analystQueries makes the fixed set (seeded) from sampled names and the
// tables: 10 prefixes, 10 infixes, 10 corporations, 5 member-count and 5
// birthday ranges, and the two-facet count over every structure.
func analystQueries(ctx context.Context, conn *pgx.Conn, names []string) ([]analystQuery, error) {
	rng := rand.New(rand.NewPCG(11, 19))
	letters := func(s string) bool {
		for _, c := range s {
			if c < 'a' || c > 'z' {
				return false
			}
		}
		return true
	}
	var qs []analystQuery
	seen := map[string]bool{}
	for tries := 0; tries < 100000 && len(qs) < 20; tries++ {
		n := strings.ToLower(names[rng.IntN(len(names))])
		if len(qs) < 10 { // prefixes of 4 letters
			if len(n) < 4 || !letters(n[:4]) || seen[n[:4]] {
				continue
			}
			p := n[:4]
			seen[p] = true
			qs = append(qs, analystQuery{Class: "prefix", Req: analyst.Request{Query: "name:" + p + "*", Category: snapshots.CategoryCharacter},
				SQL: fmt.Sprintf(`SELECT count(*) FROM names WHERE lower(name) LIKE '%s%%'`, p)})
			continue
		}
		if len(n) < 5 { // infixes of 3 letters, from inside the name
			continue
		}
		i := 1 + rng.IntN(len(n)-4)
		w := n[i : i+3]
		if !letters(w) || seen["*"+w] {
			continue
		}
		seen["*"+w] = true
		qs = append(qs, analystQuery{Class: "wildcard", Req: analyst.Request{Query: "name:*" + w + "*", Category: snapshots.CategoryCharacter},
			SQL: fmt.Sprintf(`SELECT count(*) FROM names WHERE name ILIKE '%%%s%%'`, w)})
	}
	rows, err := conn.Query(ctx, `SELECT id FROM a_corporations ORDER BY hashint8(id) LIMIT 10`)
	if err != nil {
		return nil, err
	}
	corps, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	for _, c := range corps {
		qs = append(qs, analystQuery{Class: "term", Req: analyst.Request{Query: fmt.Sprintf("corporation_id:%d", c), Category: snapshots.CategoryCharacter},
			SQL: fmt.Sprintf(`SELECT count(*) FROM a_characters WHERE corporation_id = %d`, c)})
	}
	for _, n := range []int{10, 50, 100, 500, 1000} {
		qs = append(qs, analystQuery{Class: "range", Req: analyst.Request{Query: fmt.Sprintf("member_count:>=%d", n), Category: snapshots.CategoryCorporation},
			SQL: fmt.Sprintf(`SELECT count(*) FROM a_corporations WHERE member_count >= %d`, n)})
	}
	for _, y := range []int{2008, 2014, 2020, 2024, 2026} {
		qs = append(qs, analystQuery{Class: "daterange", Req: analyst.Request{Query: fmt.Sprintf(`birthday:>="%d-01-01T00:00:00Z"`, y), Category: snapshots.CategoryCharacter},
			SQL: fmt.Sprintf(`SELECT count(*) FROM a_characters WHERE birthday >= '%d-01-01T00:00:00Z'`, y)})
	}
	qs = append(qs, analystQuery{Class: "facets", Req: analyst.Request{Query: "*", Category: snapshots.CategoryStructure, Facets: []string{"state", "region_id"}},
		SQL:   `SELECT count(*) FROM a_structures`,
		Group: []string{`SELECT state, count(*) FROM a_structures GROUP BY state`, `SELECT region_id, count(*) FROM a_structures GROUP BY region_id`}})
	return qs, nil
}

// pgAnalyst runs q's SQL, setting q.Want; the facet class also runs each
// GROUP BY to the end.
func pgAnalyst(ctx context.Context, conn *pgx.Conn, q *analystQuery) error {
	if err := conn.QueryRow(ctx, q.SQL).Scan(&q.Want); err != nil {
		return fmt.Errorf("%s: %w", q.SQL, err)
	}
	for _, sql := range q.Group {
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// analystTable prints the set's figures, gds next to PostgreSQL.
func analystTable(p func(string, ...any), r analystResult) {
	p("\n== analysts' queries (bleve through analyst.Engine, warm, 1 client; limit 20 hits + total) vs PostgreSQL (1 connection)\n")
	if r.Err != nil {
		p("   not measured: %v\n", r.Err)
		return
	}
	p("   PostgreSQL extra load: analysts' tables, btree text_pattern_ops on lower(name), btrees, vacuum analyze: %s\n", r.Load.Round(time.Millisecond))
	p("   %d of %d queries: gds total differs from PostgreSQL's count (case folding: gds folds fully, PostgreSQL lower())\n\n", r.Mismatches, len(r.Queries))
	hdr := fmt.Sprintf("%8s %8s %8s %8s", "p50 ms", "p95 ms", "p99 ms", "max ms")
	p("%-10s %3s | %s | %s\n", "class", "n", "gds "+hdr, "PG  "+hdr)
	row := func(t Timing) string {
		if !t.Measured {
			return fmt.Sprintf("%-35s", "not measured")
		}
		return fmt.Sprintf("%8s %8s %8s %8s", ms(t.P50), ms(t.P95), ms(t.P99), ms(t.Max))
	}
	worst := time.Duration(0)
	for _, c := range analystClasses {
		n := 0
		for _, q := range r.Queries {
			if q.Class == c {
				n++
			}
		}
		p("%-10s %3d |     %s |     %s\n", c, n, row(r.GDS[c]), row(r.PG[c]))
		worst = max(worst, r.GDS[c].P99)
	}
	p("   issue target: every class p99 <= 300 ms: worst gds p99 %s ms\n", ms(worst))
	p("   queries: %s\n", strings.Join(slices.Collect(func(yield func(string) bool) {
		for _, q := range r.Queries {
			if !yield(fmt.Sprintf("%s[%d/%d]", q.Req.Query, q.Got, q.Want)) {
				return
			}
		}
	}), " "))
}
