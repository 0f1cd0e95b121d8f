package query_test

import (
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/query"
)

// BenchmarkLocal resolves and groups a local of 1,000 character names
// drawn at random from the generation among the names of one character
// each, as the game's are (folded, as the table holds them: the lookup
// ignores case); BenchmarkLocal/namesakes draws any name (generated
// names repeat: each finds up to MaxLocalNamesakes pilots). Over the 50,000 characters of benchSearcher,
// or over the generation of an existing data directory opened as gds
// serve opens it (tables and stores in memory when they fit), the way
// docs/performance.md measures it at 10M names:
//
//	go test -run '^$' -bench Local -benchmem ./query
//	GDS_BENCH_DATA=/tmp/w10m/data go test -run '^$' -bench Local -benchmem ./query
func BenchmarkLocal(b *testing.B) {
	var s *query.Searcher
	var m *indexer.Manager
	if data := os.Getenv("GDS_BENCH_DATA"); data != "" {
		var err error
		m, err = indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard),
			TablesInMemory: true, StoresInMemoryAuto: true})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		s = query.New(m)
	} else {
		s, _ = benchSearcher(b)
	}
	v, err := s.View()
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	query.LocalDirsNowForTest(s)
	for _, unique := range []bool{true, false} {
		name := "unique"
		if !unique {
			name = "namesakes"
		}
		locals := benchLocals(b, s, 16, query.MaxLocalNames, unique)
		if _, err := v.Local(locals[0]); err != nil { // reads the directories
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			found, i := 0, 0
			cpu := query.ProcessCPUForTest()
			for b.Loop() {
				l, err := v.Local(locals[i%len(locals)])
				if err != nil {
					b.Fatal(err)
				}
				found += len(l.Characters)
				i++
			}
			b.ReportMetric(float64(found)/float64(max(i, 1)), "characters/op")
			b.ReportMetric(float64(query.ProcessCPUForTest()-cpu)/float64(max(i, 1)), "cpu-ns/op")
		})
	}
}

// benchLocals draws n locals of size names each from the live
// generation's character table; unique: names of one character only.
func benchLocals(b *testing.B, s *query.Searcher, n, size int, unique bool) [][]string {
	b.Helper()
	t := query.CharacterTableForTest(s)
	if t == nil || t.Len() == 0 {
		b.Fatal("no characters")
	}
	rng := rand.New(rand.NewPCG(7, 37))
	out := make([][]string, n)
	for i := range out {
		for len(out[i]) < size {
			name := t.Name(uint32(rng.IntN(t.Len())))
			if unique {
				n := 0
				t.Exact(name, func(uint32, int64) bool { n++; return n < 2 })
				if n > 1 {
					continue
				}
			}
			out[i] = append(out[i], string(name))
		}
	}
	return out
}
