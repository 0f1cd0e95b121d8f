//go:build linux

package nametable_test

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"gds/indexer/nametable"
	"gds/snapshots/envtest"
)

// BenchmarkWalkTable runs the contains texts of a bench query set, one
// per operation in turn (so lists and names are rarely in cache, as in a
// server), against a table built elsewhere, such as a 10M-name
// generation's character table, with the answer's limit of 500. It only
// runs when both are named:
//
//	GDS_WALK_TABLE=/path/generations/N/character/base.tbl GDS_WALK_QUERIES=/path/queries.json \
//	  go test -run '^$' -bench WalkTable -benchtime 17910x -count 5 ./indexer/nametable
func BenchmarkWalkTable(b *testing.B) {
	tbl, texts := walkTableInput(b)
	defer tbl.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st nametable.Stats
	i := 0
	start := threadCPU()
	hits := 0
	for b.Loop() {
		hits += walkLimit(tbl, texts[i%len(texts)], 500, &st)
		i++
	}
	// The thread's CPU time: on a shared machine, steadier than ns/op.
	b.ReportMetric(float64(threadCPU()-start)/float64(max(i, 1)), "cpu-ns/op")
	b.ReportMetric(float64(st.Candidates)/float64(max(i, 1)), "candidates/op")
	b.ReportMetric(float64(hits)/float64(max(i, 1)), "hits/op")
	b.ReportMetric(float64(st.Steps)/float64(max(i, 1)), "steps/op")
}

// BenchmarkExactTable runs the strict texts of a bench query set (whole
// names), one per operation in turn, against a table built elsewhere (the
// variables of BenchmarkWalkTable), reading the IDs of up to 500
// namesakes as a strict answer does. Generated names repeat: a strict text
// of the bench's set finds 54 pilots on average at 10M, 153 at 50M, whose
// cells lie far apart:
//
//	GDS_WALK_TABLE=/path/generations/N/character/base.tbl GDS_WALK_QUERIES=/path/queries.json \
//	  go test -run '^$' -bench ExactTable -benchtime 219000x -count 5 ./indexer/nametable
func BenchmarkExactTable(b *testing.B) {
	tbl, texts := tableInput(b, envtest.StrictTexts, 1)
	defer tbl.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	i, hits, start := 0, 0, threadCPU()
	var sum int64
	for b.Loop() {
		n := 0
		tbl.Exact(texts[i%len(texts)], func(_ uint32, id int64) bool {
			sum += id
			n++
			return n < 500
		})
		hits += n
		i++
	}
	idSink += sum
	b.ReportMetric(float64(threadCPU()-start)/float64(max(i, 1)), "cpu-ns/op")
	b.ReportMetric(float64(hits)/float64(max(i, 1)), "hits/op")
}

// TestWalkTableSlowest lists the texts of a bench query set (see
// BenchmarkWalkTable for the variables naming it) that take the most CPU,
// each text's best of five, lists and names then in cache: the
// computation alone, steadier than any wall-clock figure on a shared
// machine.
func TestWalkTableSlowest(t *testing.T) {
	tbl, texts := walkTableInput(t)
	defer tbl.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	type timed struct {
		text string
		d    time.Duration
		st   nametable.Stats
	}
	// Cold first: each text once a pass, its CPU time by text length.
	var cold [6]time.Duration
	var count [6]int
	for range 3 {
		for _, text := range texts {
			var st nametable.Stats
			start := threadCPU()
			walkLimit(tbl, text, 500, &st)
			k := min(len(text)-3, 5)
			cold[k] += threadCPU() - start
			count[k]++
		}
	}
	for k := range cold {
		t.Logf("cold, %d bytes%s: %d texts, %v a text", k+3, map[bool]string{true: " or more"}[k == 5], count[k]/3, cold[k]/time.Duration(max(count[k], 1)))
	}
	var all []timed
	var total time.Duration
	for _, text := range texts {
		var st nametable.Stats
		best := time.Duration(1 << 62)
		for range 5 {
			start := threadCPU()
			walkLimit(tbl, text, 500, &st)
			best = min(best, threadCPU()-start)
		}
		all = append(all, timed{string(text), best, st})
		total += best
	}
	slices.SortFunc(all, func(a, b timed) int { return int(b.d - a.d) })
	t.Logf("%d texts, mean %v", len(all), total/time.Duration(len(all)))
	for _, x := range all[:min(20, len(all))] {
		t.Logf("%-20q %10v candidates %d steps %d", x.text, x.d, x.st.Candidates/5, x.st.Steps/5)
	}
}

// walkLimit collects up to limit hits of text and reads their IDs, as a
// search answer does.
func walkLimit(tbl *nametable.Table, text []byte, limit int, st *nametable.Stats) int {
	var buf [500]uint32
	hits := buf[:0]
	tbl.Contains(text, nil, st, limit, func(o uint32, _ nametable.Match) bool {
		hits = append(hits, o)
		return len(hits) < limit
	})
	var sum int64
	for _, o := range hits {
		sum += tbl.ID(o)
	}
	idSink += sum
	return len(hits)
}

var idSink int64

func walkTableInput(tb testing.TB) (*nametable.Table, [][]byte) {
	return tableInput(tb, envtest.ContainsTexts, 3)
}

// tableInput loads the table GDS_WALK_TABLE names and folds the texts of
// the query set GDS_WALK_QUERIES names that read picks, leaving out those
// shorter than least bytes.
func tableInput(tb testing.TB, read func(testing.TB, string) []string, least int) (*nametable.Table, [][]byte) {
	env := envtest.Getenv(tb, "a table and a bench query set", "GDS_WALK_TABLE", "GDS_WALK_QUERIES")
	var texts [][]byte
	for _, text := range read(tb, env[1]) {
		if f := nametable.Fold(text); len(f) >= least {
			texts = append(texts, []byte(f))
		}
	}
	// In memory, in huge pages where the kernel has them, as gds serve
	// opens its tables.
	tbl, err := nametable.Load(env[0])
	if err != nil {
		tb.Fatal(err)
	}
	return tbl, texts
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
