package query

import (
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
	"gds/snapshots/synth"
)

// BenchmarkAffiliation answers POST /characters/affiliation/'s lookup: 1,000
// random characters an operation (ESI's largest batch), each a record-store
// lookup, and their corporations' factions. Over 50,000 generated
// characters by default; GDS_BENCH_DATA=DIR measures a data directory
// built by gds index instead (docs/performance.md, 10M names):
//
//	go test -run '^$' -bench Affiliation -benchmem ./query
//	GDS_BENCH_DATA=/path/to/data go test -run '^$' -bench Affiliation -benchmem ./query
func BenchmarkAffiliation(b *testing.B) {
	m := affiliationBenchManager(b)
	v, err := New(m).View()
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	chars := v.g.Store(snapshots.Characters)
	rng := rand.New(rand.NewPCG(1, 2))
	const batch = 1000
	batches := make([][]int64, 64)
	for i := range batches {
		seen := map[int64]bool{}
		for len(batches[i]) < batch {
			id := chars.Key(rng.IntN(chars.Len()))
			if !seen[id] {
				seen[id] = true
				batches[i] = append(batches[i], id)
			}
		}
	}
	out := make([]Affiliation, 0, batch)
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		got, missing, err := v.Affiliations(batches[i%len(batches)], out[:0])
		if err != nil || missing >= 0 || len(got) != batch {
			b.Fatalf("%d answered, missing %d, %v", len(got), missing, err)
		}
		i++
	}
	// Wall time per batch is ns/op (the batch is split among the
	// processors); the processor time it took, all of them together:
	b.ReportMetric(float64(processCPU()-cpu)/float64(max(i, 1)), "cpu-ns/op")
	b.ReportMetric(float64(chars.Len()), "characters")
}

func affiliationBenchManager(b *testing.B) *indexer.Manager {
	if dir := os.Getenv("GDS_BENCH_DATA"); dir != "" {
		m, err := indexer.Open(indexer.Options{DataDir: dir, Logger: zerolog.New(io.Discard)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close() })
		return m
	}
	m := indexertest.Manager(b, indexertest.Generated(b, synth.Config{
		Characters: 50_000, Corporations: 1000, Alliances: 50, Structures: 200, Seed: 7,
	}).Dir)
	// The analysts' bleve part builds in the background after the switch:
	// measured beside it, the lookups would share the processors.
	for m.Status().Building != nil {
		time.Sleep(50 * time.Millisecond)
	}
	return m
}

// processCPU is the processor time the process has used, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
