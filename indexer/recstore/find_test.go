package recstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// findSampled answers as a binary search over all the keys: every key,
// its neighbours, and keys before and after all of them, for arrays of
// every length around the sample's span, dense and sparse, both widths.
func TestFindSampled(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, sampleEvery - 1, sampleEvery, sampleEvery + 1, 3*sampleEvery + 7, 5000} {
		for _, gap := range []int{1, 2, 1000} {
			keys32 := make([]uint32, n)
			keys := make([]int64, n)
			k := 5 + rng.IntN(3)
			for i := range keys {
				keys32[i], keys[i] = uint32(k), int64(k)<<20
				k += 1 + rng.IntN(gap)
			}
			s32, s64 := sampleKeys(keys32), sampleKeys(keys)
			probe := []int{0, 1, 2, 3, 4, k, k + 1, 1 << 30}
			for _, x := range keys32 {
				probe = append(probe, int(x)-1, int(x), int(x)+1)
			}
			checkFindAll(t, keys32, s32, probe, func(p int) uint32 { return uint32(p) })
			checkFindAll(t, keys, s64, probe, func(p int) int64 { return int64(p)<<20 + int64(p&1) })
			checkFindAll(t, keys, nil, probe, func(p int) int64 { return int64(p) << 20 })
			for _, p := range probe {
				i, ok := findSampled(keys32, s32, uint32(p))
				wi, wok := slices.BinarySearch(keys32, uint32(p))
				if i != wi || ok != wok {
					t.Fatalf("n %d gap %d: uint32 key %d at %d, %v; binary search says %d, %v", n, gap, p, i, ok, wi, wok)
				}
				for _, q := range []int64{int64(p) << 20, int64(p)<<20 + 1} {
					i, ok = findSampled(keys, s64, q)
					wi, wok = slices.BinarySearch(keys, q)
					if i != wi || ok != wok {
						t.Fatalf("n %d gap %d: int64 key %d at %d, %v; binary search says %d, %v", n, gap, q, i, ok, wi, wok)
					}
				}
			}
		}
	}
}

// checkFindAll checks that findAllSampled finds every probe where a
// binary search does, and -1 where that finds none.
func checkFindAll[T uint32 | int64](t *testing.T, keys, sample []T, probe []int, key func(int) T) {
	t.Helper()
	pos := make([]int, len(probe))
	findAllSampled(keys, sample, len(probe), func(j int) (T, bool) { return key(probe[j]), probe[j] != 3 }, pos)
	for j, p := range probe {
		want := -1
		if i, ok := slices.BinarySearch(keys, key(p)); ok && p != 3 {
			want = i
		}
		if pos[j] != want {
			t.Fatalf("%d keys (sampled %v): key %d found at %d, want %d", len(keys), sample != nil, key(p), pos[j], want)
		}
	}
}

// BenchmarkFindKeys finds keys at random in 10M sorted uint32 keys (40
// MB, as the 10M characters' store holds), through the sample and by a
// binary search over all of them:
//
//	go test -run '^$' -bench FindKeys ./indexer/recstore
func BenchmarkFindKeys(b *testing.B) {
	const n = 10_000_000
	keys := make([]uint32, n)
	rng := rand.New(rand.NewPCG(1, 2))
	k := uint32(0)
	for i := range keys {
		keys[i] = k
		k += 1 + uint32(rng.IntN(3))
	}
	probes := make([]uint32, 1<<16)
	for i := range probes {
		probes[i] = keys[rng.IntN(n)]
	}
	for _, sampled := range []bool{false, true} {
		var sample []uint32
		if sampled {
			sample = sampleKeys(keys)
		}
		b.Run(fmt.Sprint("sampled=", sampled), func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, ok := findSampled(keys, sample, probes[i&(len(probes)-1)]); !ok {
					b.Fatal("a key not found")
				}
				i++
			}
		})
	}
}
