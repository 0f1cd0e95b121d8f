//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"gds/snapshots"
)

// Bodies per POST route row (each of 1,000 items), typos of the suggest row.
const (
	routeBodies = 100
	routePer    = 1000
	suggestN    = 1000
)

// PostgreSQL's side of the route rows.
const (
	sqlAffiliation = `SELECT c.id, c.corporation_id, co.alliance_id, co.faction_id
	FROM r_characters c JOIN r_corporations co ON co.id = c.corporation_id
	WHERE c.id = ANY($1::bigint[])`
	sqlLocal = `WITH q AS (SELECT DISTINCT lower(n) AS l FROM unnest($1::text[]) n),
	c AS (SELECT n.id, n.name, rc.corporation_id FROM q JOIN names n ON lower(n.name) = q.l JOIN r_characters rc ON rc.id = n.id),
	g AS (SELECT c.corporation_id, co.name, co.alliance_id, count(*) AS n FROM c JOIN r_corporations co ON co.id = c.corporation_id GROUP BY 1, 2, 3)
	SELECT 'character', id, name, 1::bigint FROM c
	UNION ALL SELECT 'corporation', corporation_id, name, n FROM g
	UNION ALL SELECT 'alliance', g.alliance_id, a.name, sum(g.n)::bigint FROM g JOIN r_alliances a ON a.id = g.alliance_id GROUP BY g.alliance_id, a.name`
	sqlSuggest = `SELECT id, name FROM names ORDER BY name <-> $1 LIMIT 10`
)

// specs are the route rows. The tables of affiliation and local load once,
// when the first of them runs; the GiST index when suggest runs.
func (w routeWork) specs(conn *pgx.Conn, load *pgLoad, loaded *bool, rr *routeResult) []routeSpec {
	tables := func(ctx context.Context) error {
		if *loaded {
			return nil
		}
		t0 := time.Now()
		if err := loadRouteTables(ctx, conn, w.snap); err != nil {
			return err
		}
		*loaded, rr.TablesLoad = true, time.Since(t0)
		return nil
	}
	ids := func(path string) []string {
		return w.bodies(len(w.ids), routeBodies, routePer, 2, func(i int) string { return strconv.FormatInt(w.ids[i], 10) },
			func(items []string) string { return postRequest(path, "["+strings.Join(items, ",")+"]") })
	}
	// A local's names are names of one character each when the sample has
	// enough of them (at 10M generated names many repeat, which the game's
	// names never do), else any sampled names.
	pool := w.unique
	if len(pool) < routePer {
		pool = w.names
	}
	names := func(path string) []string {
		return w.bodies(len(pool), routeBodies, routePer, 3, func(i int) string { return pool[i] },
			func(items []string) string { return postTypedRequest(path, "text/plain", strings.Join(items, "\n")) })
	}
	texts, of := typos(w.names, suggestN, w.seed)
	suggest := func(path string) []string {
		out := make([]string, len(texts))
		for i, t := range texts {
			out[i] = suggestPath(path, t)
		}
		return out
	}
	return []routeSpec{
		{name: routeAffiliation, row: "affiliation", paths: []string{"/latest/characters/affiliation/", "/characters/affiliation/"}, reqs: ids,
			pg: func(ctx context.Context) (func(*pgx.Conn, int) error, error) {
				args := bodyArgs(ids(""), idArray)
				return func(c *pgx.Conn, i int) error { return pgRows(ctx, c, sqlAffiliation, args[i]) }, tables(ctx)
			},
			check: checkAffiliation},
		{name: routeLocal, row: "local", paths: []string{"/latest/local/", "/local/"}, reqs: names,
			pg: func(ctx context.Context) (func(*pgx.Conn, int) error, error) {
				args := bodyArgs(names(""), func(s string) any { return strings.Split(s, "\n") })
				return func(c *pgx.Conn, i int) error { return pgRows(ctx, c, sqlLocal, args[i]) }, tables(ctx)
			},
			check: checkLocal},
		{name: routeSuggest, row: "suggest", paths: []string{"/latest/suggest/", "/suggest/"}, reqs: suggest,
			pg: func(ctx context.Context) (func(*pgx.Conn, int) error, error) {
				if load.GiST == 0 {
					logStep(w.t, "PostgreSQL: the GiST trigram index of suggest (part of its build)")
					stopWatch := watchIndexBuilds(ctx, w.t, w.pg)
					err := w.pg.buildGiST(ctx, conn, load)
					stopWatch()
					if err != nil {
						return nil, err
					}
					logStep(w.t, "PostgreSQL: GiST built in %s, %s", load.GiST.Round(time.Millisecond), human(load.GiSTSize))
				}
				return func(c *pgx.Conn, i int) error { return pgRows(ctx, c, sqlSuggest, texts[i]) }, nil
			},
			timed: suggestTimed(texts, of, w),
			check: func(_ context.Context, _ *pgx.Conn, answers []answer, row *routeRow) string {
				return checkSuggest(answers, of, w, row)
			}},
	}
}

// bodyArgs turns each request's body into PostgreSQL's argument.
func bodyArgs(reqs []string, arg func(body string) any) []any {
	out := make([]any, len(reqs))
	for i, r := range reqs {
		_, _, body := splitRequest(r)
		out[i] = arg(body)
	}
	return out
}

// idArray is a JSON array of IDs as PostgreSQL's bigint[] argument.
func idArray(body string) any {
	var ids []int64
	json.Unmarshal([]byte(body), &ids)
	return ids
}

// pgRows runs a query and reads every row.
func pgRows(ctx context.Context, c *pgx.Conn, sql string, arg any) error {
	rows, err := c.Query(ctx, sql, arg)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}

// checkAffiliation compares the corporation of every character of the
// first five answers with PostgreSQL's.
func checkAffiliation(ctx context.Context, c *pgx.Conn, answers []answer, _ *routeRow) string {
	n, differ := 0, 0
	for _, a := range answers[:min(5, len(answers))] {
		var got []struct {
			CharacterID   int64 `json:"character_id"`
			CorporationID int64 `json:"corporation_id"`
		}
		if err := json.Unmarshal(a.Body, &got); err != nil {
			return "gds's answer is not an array of affiliations: " + err.Error()
		}
		ids := make([]int64, len(got))
		for i, g := range got {
			ids[i] = g.CharacterID
		}
		want := map[int64]int64{}
		rows, err := c.Query(ctx, sqlAffiliation, ids)
		if err != nil {
			return "PostgreSQL: " + err.Error()
		}
		for rows.Next() {
			var id, corp int64
			var alliance, faction *int64
			rows.Scan(&id, &corp, &alliance, &faction)
			want[id] = corp
		}
		rows.Close()
		for _, g := range got {
			n++
			if want[g.CharacterID] != g.CorporationID {
				differ++
			}
		}
	}
	return fmt.Sprintf("first 5 answers: %d characters, %d with a corporation other than PostgreSQL's", n, differ)
}

// checkLocal counts, in the first five answers, the characters named in
// the body whose IDs gds's answer holds, against PostgreSQL's count.
func checkLocal(ctx context.Context, c *pgx.Conn, answers []answer, _ *routeRow) string {
	gdsFound, pgFound := 0, 0
	for _, a := range answers[:min(5, len(answers))] {
		_, _, body := splitRequest(a.URI)
		has := answerValues(a.Body)
		rows, err := c.Query(ctx, sqlLocal, strings.Split(body, "\n"))
		if err != nil {
			return "PostgreSQL: " + err.Error()
		}
		for rows.Next() {
			var kind, name string
			var id, n int64
			rows.Scan(&kind, &id, &name, &n)
			if kind == "character" {
				pgFound++
				if has.id(id) {
					gdsFound++
				}
			}
		}
		rows.Close()
	}
	return fmt.Sprintf("first 5 answers: PostgreSQL found %d characters, gds's answers hold %d of their IDs", pgFound, gdsFound)
}

// loadRouteTables copies the characters' corporations and the
// corporations' and alliances' names into PostgreSQL with the indexes the
// route rows use.
func loadRouteTables(ctx context.Context, conn *pgx.Conn, snap *snapshots.Snapshot) error {
	for _, sql := range []string{
		`CREATE TABLE r_characters (id bigint PRIMARY KEY, corporation_id bigint NOT NULL)`,
		`CREATE TABLE r_corporations (id bigint PRIMARY KEY, name text NOT NULL, alliance_id bigint, faction_id bigint)`,
		`CREATE TABLE r_alliances (id bigint PRIMARY KEY, name text NOT NULL)`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	nz := func(v int64) any {
		if v == 0 {
			return nil
		}
		return v
	}
	err := copyKind(ctx, conn, snap, snapshots.Characters, "r_characters", []string{"id", "corporation_id"}, func(r snapshots.Record, key int64) []any {
		return []any{key, r.(*snapshots.Character).CorporationID}
	})
	if err == nil {
		err = copyKind(ctx, conn, snap, snapshots.Corporations, "r_corporations", []string{"id", "name", "alliance_id", "faction_id"}, func(r snapshots.Record, key int64) []any {
			c := r.(*snapshots.Corporation)
			return []any{key, c.DisplayName(), nz(c.AllianceID), nz(c.FactionID)}
		})
	}
	if err == nil {
		err = copyKind(ctx, conn, snap, snapshots.Alliances, "r_alliances", []string{"id", "name"}, func(r snapshots.Record, key int64) []any {
			return []any{key, r.(snapshots.Named).DisplayName()}
		})
	}
	if err != nil {
		return err
	}
	for _, sql := range []string{
		`CREATE INDEX r_corporations_lower ON r_corporations (lower(name))`,
		`CREATE INDEX r_alliances_lower ON r_alliances (lower(name))`,
		`ANALYZE r_characters`, `ANALYZE r_corporations`, `ANALYZE r_alliances`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// copyKind streams one kind of the snapshot into a table with COPY.
func copyKind(ctx context.Context, conn *pgx.Conn, snap *snapshots.Snapshot, kind snapshots.Kind, table string, cols []string, row func(snapshots.Record, int64) []any) error {
	if !snap.Has(kind) {
		return nil
	}
	rows := make(chan []any, 4096)
	var snapErr error
	stop := make(chan struct{})
	go func() {
		defer close(rows)
		snapErr = snap.Each(kind, func(r snapshots.Record, line snapshots.Line) error {
			select {
			case rows <- row(r, line.Key):
				return nil
			case <-stop:
				return context.Canceled
			}
		})
	}()
	_, err := conn.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		r, ok := <-rows
		if !ok {
			return nil, nil
		}
		return r, nil
	}))
	close(stop)
	for range rows {
	}
	if err == nil {
		err = snapErr
	}
	return err
}
