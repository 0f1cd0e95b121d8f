//go:build bench

package bench

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The suggest row's budget on PostgreSQL's side. Its nearest-neighbour
// query (ORDER BY name <-> $1 LIMIT 10 on the GiST trigram index) takes
// about a second at 10M names, so the whole typo set would take most of
// an hour on 2 cores: PostgreSQL's recall is measured on the first
// -suggest-sample typos, and its throughput at 16 connections from one
// run that asks the typos in order, starting queries until that sample
// is asked and -suggest-pg-time has passed. gds answers the whole set;
// its recall is reported on the whole set and on the same sample.

var (
	flagSuggestSample = flag.Int("suggest-sample", 100, "PostgreSQL's suggest recall is measured on the first N typos of the set (gds's on the whole set and on the same N)")
	flagSuggestTime   = flag.Duration("suggest-pg-time", 30*time.Second, "PostgreSQL's suggest throughput at 16 connections: queries start, in the typo set's order, until the recall sample is asked and this much time has passed")
)

// suggestBudget is what PostgreSQL's budgeted suggest run covered.
type suggestBudget struct {
	Sample int           // the first Sample typos, every one asked
	Asked  int           // typos asked in the run (Sample or more)
	Box    time.Duration // the time box
	Found  []bool        // per typo of the set: PostgreSQL's 10 held its name (asked ones only)
}

// recall is the share of the first n typos whose name found holds.
func recall(found []bool, n int) float64 {
	if n == 0 {
		return 0
	}
	k := 0
	for _, f := range found[:n] {
		if f {
			k++
		}
	}
	return float64(k) / float64(n)
}

// pgSuggestRun asks PostgreSQL for the typos in order on conns, one query
// at a time per connection, until the first sample are asked and box has
// passed (or every typo is asked); isName says whether a row is the
// typo's true name.
func pgSuggestRun(ctx context.Context, conns []*pgx.Conn, texts []string, isName func(i int, id int64, name string) bool, sample int, box time.Duration) (Timing, suggestBudget) {
	b := suggestBudget{Sample: min(sample, len(texts)), Box: box, Found: make([]bool, len(texts))}
	start := time.Now()
	var next atomic.Int64
	lats := make([][]time.Duration, len(conns))
	errs := make([]int, len(conns))
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(texts) || i >= b.Sample && time.Since(start) >= box {
					return
				}
				t0 := time.Now()
				found, err := pgSuggestOne(ctx, conns[c], texts[i], func(id int64, name string) bool { return isName(i, id, name) })
				lats[c] = append(lats[c], time.Since(t0))
				b.Found[i] = found
				if err != nil {
					errs[c]++
				}
			}
		}(c)
	}
	wg.Wait()
	var all []time.Duration
	nerr := 0
	for c := range lats {
		all = append(all, lats[c]...)
		nerr += errs[c]
	}
	b.Asked = len(all)
	return summarize(all, time.Since(start), nerr), b
}

// pgSuggestOne runs the suggest query for text and reports whether a row
// is the name sought.
func pgSuggestOne(ctx context.Context, c *pgx.Conn, text string, isName func(id int64, name string) bool) (bool, error) {
	rs, err := c.Query(ctx, sqlSuggest, text)
	if err != nil {
		return false, err
	}
	found := false
	for rs.Next() {
		var id int64
		var name string
		if err := rs.Scan(&id, &name); err != nil {
			rs.Close()
			return false, err
		}
		found = found || isName(id, name)
	}
	rs.Close()
	return found, rs.Err()
}

// suggestTimed is the suggest row's PostgreSQL side: the budgeted run,
// whose recall on the sample goes into row.
func suggestTimed(texts []string, of []int, w routeWork) func(ctx context.Context, conns []*pgx.Conn, row *routeRow) Timing {
	return func(ctx context.Context, conns []*pgx.Conn, row *routeRow) Timing {
		isName := func(i int, id int64, name string) bool {
			return id == w.ids[of[i]] || strings.EqualFold(name, w.names[of[i]])
		}
		t, b := pgSuggestRun(ctx, conns, texts, isName, *flagSuggestSample, *flagSuggestTime)
		row.PGSample, row.PGAsked, row.PGBox = b.Sample, b.Asked, b.Box
		row.PGRecall = recall(b.Found, b.Sample)
		return t
	}
}

// checkSuggest is gds's recall@10, the share of typos whose true
// character (its ID, or its name) is among the 10 answers, on the whole
// set and on PostgreSQL's sample, beside PostgreSQL's on that sample.
func checkSuggest(answers []answer, of []int, w routeWork, row *routeRow) string {
	found := make([]bool, len(answers))
	for i, a := range answers {
		id, name := w.ids[of[i]], w.names[of[i]]
		has := answerValues(a.Body)
		found[i] = has.id(id) || has.name(name)
	}
	row.Recall = recall(found, len(found))
	row.RecallSample = recall(found, min(row.PGSample, len(found)))
	return fmt.Sprintf("recall@10 of one-edit typos: gds %.1f%% of all %d, %.1f%% of the first %d; PostgreSQL %.1f%% of the first %d "+
		"(PostgreSQL's q/s and latencies: %d typos asked in order at %d connections, until the first %d were asked and %s had passed)",
		100*row.Recall, len(found), 100*row.RecallSample, row.PGSample, 100*row.PGRecall, row.PGSample, row.PGAsked, routeConns, row.PGSample, row.PGBox)
}
