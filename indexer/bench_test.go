package indexer_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots/synth"
)

// BenchmarkBuild times a full build of a small generated snapshot (20,000
// characters plus a few hundred corporations and structures) into a fresh
// data directory each iteration. It only runs with -bench:
//
//	go test -run '^$' -bench Build -benchtime 3x -cpuprofile cpu.out ./indexer
func BenchmarkBuild(b *testing.B) {
	dir := indexertest.Generated(b, synth.Config{
		Characters: 20_000, Corporations: 400, Alliances: 20, Structures: 400, Seed: 7,
	}).Dir
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		n++
		m, err := indexer.Open(indexer.Options{DataDir: filepath.Join(b.TempDir(), "data"), Logger: zerolog.New(io.Discard)})
		if err != nil {
			b.Fatal(err)
		}
		indexertest.Build(b, m, indexer.BuildRequest{Snapshot: dir, Trigger: "bench"})
		m.Close()
	}
	b.ReportMetric(20_000*float64(n)/b.Elapsed().Seconds(), "characters/s")
}
