//go:build bench

package bench

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The rows a run measures (-rows), so that a large size can be measured
// in parts, and the progress it prints while it runs.

// rowNames are the rows -rows chooses from, in the order of a run.
var rowNames = []string{"build", "contains", "strict", "cached", "lookups", "analysts", "affiliation", "local", "suggest", "incremental"}

var (
	flagRows = flag.String("rows", "all", "comma-separated rows to measure, of "+strings.Join(rowNames, ",")+
		" (all: every one); the snapshot and the generation are made whatever the choice, the gds build timed only with build, and PostgreSQL loaded only for a row beside it (every row but incremental)")
	flagProgress = flag.Duration("progress", time.Minute, "while a phase runs, print what it is and how long it and the run have taken this often (0: never)")
)

// rowSet is the rows a run measures: every row of rowNames not in off,
// which holds why each other row does not run.
type rowSet struct{ off map[string]string }

// chosen is this run's choice (every row unless -rows says otherwise).
var chosen = rowSet{off: map[string]string{}}

// parseRows reads -rows: "all", or row names separated by commas.
func parseRows(s string) (rowSet, error) {
	r := rowSet{off: map[string]string{}}
	if strings.TrimSpace(s) == "all" {
		return r, nil
	}
	on := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(rowNames, f) {
			return r, fmt.Errorf("-rows: unknown row %q (rows: %s)", f, strings.Join(rowNames, ","))
		}
		on[f] = true
	}
	if len(on) == 0 {
		return r, fmt.Errorf("-rows: no row named (rows: %s)", strings.Join(rowNames, ","))
	}
	for _, n := range rowNames {
		if !on[n] {
			r.off[n] = "-rows"
		}
	}
	return r, nil
}

// drop turns the rows off for why (a row's own flag), unless -rows did.
func (r rowSet) drop(why string, names ...string) {
	for _, n := range names {
		if r.off[n] == "" {
			r.off[n] = why
		}
	}
}

// on reports whether any of the rows is measured.
func (r rowSet) on(names ...string) bool {
	for _, n := range names {
		if r.off[n] == "" {
			return true
		}
	}
	return false
}

// search reports whether the run needs the query set (PostgreSQL's counts,
// the in-process search and gds over HTTP).
func (r rowSet) search() bool { return r.on("contains", "strict", "cached", "lookups") }

// String says which rows ran and why the others did not.
func (r rowSet) String() string {
	var ran, whys []string
	byWhy := map[string][]string{}
	for _, n := range rowNames {
		if r.on(n) {
			ran = append(ran, n)
			continue
		}
		if why := r.off[n]; byWhy[why] == nil {
			whys = append(whys, why)
		}
		byWhy[r.off[n]] = append(byWhy[r.off[n]], n)
	}
	if len(whys) == 0 {
		return "every row (" + strings.Join(ran, ", ") + ")"
	}
	out := strings.Join(ran, ", ") + "; not run:"
	for _, why := range whys {
		out += " " + strings.Join(byWhy[why], ", ") + " (" + why + ");"
	}
	return strings.TrimSuffix(out, ";")
}

// file is name+ext when every row runs, else name-<row>+<row>...+ext, so
// that the parts of a size measured in parts keep their tables apart.
func (r rowSet) file(name, ext string) string {
	var ran []string
	for _, n := range rowNames {
		if r.on(n) {
			ran = append(ran, n)
		}
	}
	if len(ran) == len(rowNames) {
		return name + ext
	}
	return name + "-" + strings.Join(ran, "+") + ext
}

// notRun is the note of a figure whose row did not run.
func notRun(row string) string { return "row " + row + " not run (" + chosen.off[row] + ")" }

// progress is the run's clock: logStep prints the time of day, the time
// since the run began and what it does; every -progress a heartbeat
// repeats the phase still running with how long it has taken.
type progress struct {
	mu         sync.Mutex
	start      time.Time
	phase      string
	phaseStart time.Time
	stop       chan struct{}
	done       sync.WaitGroup
}

var clock = &progress{start: time.Now()}

// startProgress restarts the clock for a run and starts its heartbeat,
// stopped when the test ends.
func startProgress(t *testing.T) {
	clock.mu.Lock()
	clock.start, clock.phase, clock.phaseStart = time.Now(), "", time.Now()
	clock.mu.Unlock()
	every := *flagProgress
	if every <= 0 {
		return
	}
	stop := make(chan struct{})
	clock.done.Add(1)
	go func() {
		defer clock.done.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				clock.mu.Lock()
				phase, since := clock.phase, time.Since(clock.phaseStart)
				clock.mu.Unlock()
				if phase != "" && since >= every/2 {
					t.Logf("%s  ... still: %s (for %s)", clock.stamp(), phase, since.Round(time.Second))
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); clock.done.Wait() })
}

// stamp is the time of day and the time since the run began.
func (p *progress) stamp() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%s +%s", time.Now().UTC().Format("15:04:05"), time.Since(p.start).Round(time.Second))
}

// enter makes msg the phase the heartbeat repeats.
func (p *progress) enter(msg string) {
	p.mu.Lock()
	p.phase, p.phaseStart = msg, time.Now()
	p.mu.Unlock()
}

func logStep(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	clock.enter(msg)
	t.Logf("%s  %s", clock.stamp(), msg)
}

// watchIndexBuilds logs, every -progress, how far PostgreSQL's index
// builds are (pg_stat_progress_create_index), until the returned stop is
// called: the GIN and GiST builds take minutes at 50M names.
func watchIndexBuilds(ctx context.Context, t *testing.T, pg *postgres) (stop func()) {
	every := *flagProgress
	if every <= 0 {
		return func() {}
	}
	c, err := pg.connect(ctx)
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			// The index's own name is not visible before its build commits.
			rs, err := c.Query(ctx, `SELECT p.pid, p.phase, p.blocks_done, p.blocks_total, p.tuples_done, p.tuples_total
				FROM pg_stat_progress_create_index p`)
			if err != nil {
				continue
			}
			for rs.Next() {
				var pid int32
				var phase string
				var bd, bt, td, tt int64
				if rs.Scan(&pid, &phase, &bd, &bt, &td, &tt) == nil {
					t.Logf("%s  ... PostgreSQL CREATE INDEX (backend %d): %s, blocks %d of %d, tuples %d of %d", clock.stamp(), pid, phase, bd, bt, td, tt)
				}
			}
			rs.Close()
		}
	}()
	return func() { close(done); wg.Wait(); c.Close(ctx) }
}
