package recstore

import (
	"math"
	"runtime"
	"slices"
	"unsafe"
)

// Key searches: a store's sorted keys, searched through a sample of every
// sampleEvery-th key, one key at a time (Find) or a batch at once
// (FindAll).

// Find returns the position of key, or where it would be.
func (s *Store) Find(key int64) (int, bool) {
	if s.keys32 != nil {
		if key < s.keyBase || key-s.keyBase > math.MaxUint32 {
			return 0, false
		}
		return findSampled(s.keys32, s.sample32, uint32(key-s.keyBase))
	}
	return findSampled(s.keys, s.sample, key)
}

// sampleEvery is how many keys one sample entry stands for: 64 uint32
// keys are four cache lines. The sample of 10M keys is 625 KB, which
// stays in the processor's caches between lookups.
const sampleEvery = 64

// sampleKeys returns every sampleEvery-th key of keys.
func sampleKeys[T uint32 | int64](keys []T) []T {
	out := make([]T, (len(keys)+sampleEvery-1)/sampleEvery)
	for i := range out {
		out[i] = keys[i*sampleEvery]
	}
	return out
}

// findSampled is slices.BinarySearch(keys, k), through sample (every
// sampleEvery-th key of keys) when there is one.
func findSampled[T uint32 | int64](keys, sample []T, k T) (int, bool) {
	if sample == nil {
		return slices.BinarySearch(keys, k)
	}
	j, found := slices.BinarySearch(sample, k)
	if found {
		return j * sampleEvery, true
	}
	if j == 0 {
		return 0, false // before the first key
	}
	lo := (j - 1) * sampleEvery
	i, found := slices.BinarySearch(keys[lo:min(lo+sampleEvery, len(keys))], k)
	return lo + i, found
}

// FindAll sets pos[j] to the position of keys[j], or -1 when there is
// none (pos as long as keys). It finds them in passes over all keys
// rather than one key after another: first in the sample, a level of
// all keys' searches at a time, then one read of each key's stretch of the key
// column, reads independent of each other whose cache misses overlap,
// and last the searches, which find those stretches cached. For a
// thousand keys of millions it takes a fraction of Find's time a key.
func (s *Store) FindAll(keys []int64, pos []int) {
	if s.keys32 != nil {
		findAllSampled(s.keys32, s.sample32, len(keys), func(j int) (uint32, bool) {
			k := keys[j]
			return uint32(k - s.keyBase), k >= s.keyBase && k-s.keyBase <= math.MaxUint32
		}, pos)
		return
	}
	findAllSampled(s.keys, s.sample, len(keys), func(j int) (int64, bool) { return keys[j], true }, pos)
}

// findAllSampled is FindAll over keys and their sample; key(j) is the
// j-th key sought and whether it can be in keys at all.
func findAllSampled[T uint32 | int64](keys, sample []T, n int, key func(int) (T, bool), pos []int) {
	if sample == nil {
		for j := range n {
			k, ok := key(j)
			i, found := slices.BinarySearch(keys, k)
			pos[j] = -1
			if ok && found {
				pos[j] = i
			}
		}
		return
	}
	// Pass 1: each key's stretch of the key column (sampleEvery keys
	// from pos[j]), from the last sample entry not above it; -1 for a key
	// before them all. The searches in the sample go a level at a time
	// over all keys: a level's reads do not depend on one another, so
	// that the misses of the deeper levels, which the caches do not all
	// hold, overlap.
	ks := make([]T, n)
	for j := range n {
		ks[j], _ = key(j)
		pos[j] = 0
	}
	for length := len(sample); length > 1; {
		half := length / 2
		for j, k := range ks {
			step := 0
			if sample[pos[j]+half] <= k {
				step = half
			}
			pos[j] += step
		}
		length -= half
	}
	for j, k := range ks {
		if _, ok := key(j); !ok || len(sample) == 0 || sample[pos[j]] > k {
			pos[j] = -1
		} else {
			pos[j] *= sampleEvery
		}
	}
	// Pass 2: the stretches' cache lines, read independently.
	var touch T
	stride := 64 / int(unsafe.Sizeof(touch)) // keys a cache line
	for _, lo := range pos[:n] {
		if lo >= 0 {
			for i := lo; i < min(lo+sampleEvery, len(keys)); i += stride {
				touch += keys[i]
			}
		}
	}
	runtime.KeepAlive(touch) // the reads are the point
	// Pass 3: the searches within the stretches, which hold their first
	// keys, a level at a time too: pos[j] becomes the last key not above
	// keys[j], which is it or none.
	for length := sampleEvery; length > 1; {
		half := length / 2
		for j, k := range ks {
			if pos[j] < 0 {
				continue
			}
			step := 0
			if i := pos[j] + half; i < len(keys) && keys[i] <= k {
				step = half
			}
			pos[j] += step
		}
		length -= half
	}
	for j, k := range ks {
		if pos[j] >= 0 && keys[pos[j]] != k {
			pos[j] = -1
		}
	}
}
