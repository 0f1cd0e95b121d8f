//go:build linux

package nametable_test

import (
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"gds/indexer/nametable"
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
	for b.Loop() {
		walkLimit(tbl, texts[i%len(texts)], 500, &st)
		i++
	}
	// The thread's CPU time: on a shared machine, steadier than ns/op.
	b.ReportMetric(float64(threadCPU()-start)/float64(max(i, 1)), "cpu-ns/op")
	b.ReportMetric(float64(st.Candidates)/float64(max(i, 1)), "candidates/op")
	b.ReportMetric(float64(st.Steps)/float64(max(i, 1)), "steps/op")
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

func walkLimit(tbl *nametable.Table, text []byte, limit int, st *nametable.Stats) int {
	n := 0
	tbl.Contains(text, nil, st, func(uint32, nametable.Match) bool { n++; return n < limit })
	return n
}

func walkTableInput(tb testing.TB) (*nametable.Table, [][]byte) {
	path, qpath := os.Getenv("GDS_WALK_TABLE"), os.Getenv("GDS_WALK_QUERIES")
	if path == "" || qpath == "" {
		tb.Skip("GDS_WALK_TABLE and GDS_WALK_QUERIES name a table and a bench query set")
	}
	raw, err := os.ReadFile(qpath)
	if err != nil {
		tb.Fatal(err)
	}
	var qs []struct {
		Text   string `json:"text"`
		Strict bool   `json:"strict"`
	}
	if err := json.Unmarshal(raw, &qs); err != nil {
		tb.Fatal(err)
	}
	var texts [][]byte
	for _, q := range qs {
		if f := nametable.Fold(q.Text); !q.Strict && len(f) >= 3 {
			texts = append(texts, []byte(f))
		}
	}
	tbl, err := nametable.Open(path)
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
