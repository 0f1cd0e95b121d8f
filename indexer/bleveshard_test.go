package indexer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"gds/snapshots"
	"gds/snapshots/synth"
)

// shardDocs makes n documents with generated two- and three-word names.
func shardDocs(n int) []docInfo {
	rng := rand.New(rand.NewPCG(1, 2))
	syl := []string{"ka", "ri", "jun", "an", "el", "tha", "mo", "ve", "sa", "or", "ni", "qu"}
	word := func() string { return synth.Syllables(rng, 2+rng.IntN(3), syl...) }
	docs := make([]docInfo, n)
	for i := range docs {
		name := word() + " " + word()
		if rng.IntN(3) == 0 {
			name += " " + word()
		}
		docs[i] = docInfo{id: int64(90000000 + i), name: name}
	}
	return docs
}

// writeShard writes docs as one bleve shard in dir, in batches of bd's
// batch size.
func writeShard(bd *builder, dir string, docs []docInfo) error {
	return bd.indexShard(context.Background(), dir, func(batch *shardBatch, flush func() error) error {
		return bd.addDocs(batch, flush, docs)
	})
}

// BenchmarkBleveShard times building one bleve shard from pre-built
// documents, the bulk of a full build's time:
//
//	go test -run '^$' -bench BleveShard -benchtime 1x ./indexer
func BenchmarkBleveShard(b *testing.B) {
	const n = 200_000
	docs := shardDocs(n)
	ds := testDocuments(b)
	bd := &builder{ctx: context.Background(), opts: Options{BatchSize: 10_000, ShardSize: 1_000_000}, docs: ds}
	for _, c := range []struct {
		batch, gogc int
	}{{10_000, 100}, {10_000, 400}, {50_000, 400}} {
		b.Run(fmt.Sprintf("batch%d-gogc%d", c.batch, c.gogc), func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(c.gogc))
			bd.opts.BatchSize = c.batch
			cpu0 := cpuNow()
			for b.Loop() {
				dir := filepath.Join(b.TempDir(), "shard")
				if err := writeShard(bd, dir, docs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
			b.ReportMetric(cpuSince(cpu0)/float64(b.N*n)*1e6, "cpu-µs/doc")
		})
	}
}

// cpuNow is the process's user+system CPU time in seconds.
func cpuNow() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func cpuSince(t0 float64) float64 { return cpuNow() - t0 }

// TestShardsFor: at most ShardSize records a shard, and an even number of
// shards for a category of more than half a shard, so that two cores
// build it to the end.
func TestShardsFor(t *testing.T) {
	TablesOnlyForTest(t)
	b := &builder{opts: Options{ShardSize: 1_000_000}}
	for _, c := range []struct{ n, want int }{
		{0, 1}, {1, 1}, {500_000, 1}, {500_001, 2}, {1_000_000, 2}, {1_000_001, 2},
		{2_000_000, 2}, {2_000_001, 4}, {3_000_000, 4}, {4_000_001, 6}, {10_000_000, 10}, {10_000_001, 12},
	} {
		if got := b.shardsFor(snapshots.CategoryCorporation, c.n); got != c.want {
			t.Errorf("shardsFor(%d) at %d a shard = %d, want %d", c.n, b.opts.ShardSize, got, c.want)
		}
		if got := b.shardsFor(snapshots.CategoryCharacter, c.n); got != 0 {
			t.Errorf("shardsFor(character, %d) = %d, want none: the tables answer characters", c.n, got)
		}
	}
	b.opts.BleveCharacters = true
	if got := b.shardsFor(snapshots.CategoryCharacter, 3_000_000); got != 4 {
		t.Errorf("shardsFor(character, 3M) with BleveCharacters = %d, want 4", got)
	}
}
