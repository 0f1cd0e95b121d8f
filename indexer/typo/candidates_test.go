package typo

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCandidatesMatchSortAndMerge: the walk's candidates, merged and
// galloped, are those of concatenating the driver's lists (each cut at
// maxCandidates), sorting them, cutting the union at maxCandidates,
// keeping those in a list of every other word but free's, and taking the
// first maxVerified: over random lists of every length up to past the
// cuts, dense and sparse, with words of no list.
func TestCandidatesMatchSortAndMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for range 300 {
		var posts [][]uint32
		words := 1 + rng.IntN(4)
		matches := make([][]uint32, words)
		for j := range matches {
			for range rng.IntN(5) {
				matches[j] = append(matches[j], uint32(len(posts)))
				posts = append(posts, randomList(rng))
			}
			if len(matches[j]) == 0 && rng.IntN(2) == 0 {
				matches[j] = append(matches[j], uint32(len(posts)))
				posts = append(posts, randomList(rng))
			}
		}
		driver, free := rng.IntN(words), -1
		if words > 1 && rng.IntN(3) == 0 {
			free = (driver + 1 + rng.IntN(words-1)) % words
		}
		checkCandidates(t, posts, matches, driver, free)
	}
	// The cut of the driver's union: two lists past maxCandidates whose
	// union is every ordinal, the other word's on either side of the cut.
	dense := func(from, n int) []uint32 {
		p := make([]uint32, n)
		for i := range p {
			p[i] = uint32(from + 2*i)
		}
		return p
	}
	cut := []uint32{3, maxCandidates - 2, maxCandidates - 1, maxCandidates, maxCandidates + 1}
	checkCandidates(t, [][]uint32{dense(0, maxCandidates+9), dense(1, maxCandidates+9), cut}, [][]uint32{{0, 1}, {2}}, 0, -1)
}

// checkCandidates compares candidates with sortAndMerge over posts.
func checkCandidates(t *testing.T, posts [][]uint32, matches [][]uint32, driver, free int) {
	t.Helper()
	x := &Index{postOffs: []uint32{0}}
	for _, p := range posts {
		x.posts = append(x.posts, p...)
		x.postOffs = append(x.postOffs, uint32(len(x.posts)))
	}
	s := &searcher{x: x}
	s.candidates(matches, driver, free)
	if want := sortAndMerge(x, matches, driver, free); !slices.Equal(s.cand, want) {
		t.Fatalf("%d candidates %v…, want %d %v…", len(s.cand), s.cand[:min(len(s.cand), 8)], len(want), want[:min(len(want), 8)])
	}
}

// randomList is an ascending list of ordinals: short or past
// maxCandidates, dense or sparse.
func randomList(rng *rand.Rand) []uint32 {
	n := []int{0, 1, 3, 40, 2000, maxCandidates + 500}[rng.IntN(6)]
	gap := 1 + rng.IntN([]int{2, 8, 300}[rng.IntN(3)])
	var p []uint32
	o := uint32(rng.IntN(50))
	for range n {
		p = append(p, o)
		o += uint32(1 + rng.IntN(gap))
	}
	return p
}

// sortAndMerge is candidates by concatenation, sort and linear merges.
func sortAndMerge(x *Index, matches [][]uint32, driver, free int) []uint32 {
	var cand []uint32
	for _, id := range matches[driver] {
		p := x.postings(id)
		cand = append(cand, p[:min(len(p), maxCandidates)]...)
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	cand = cand[:min(len(cand), maxCandidates)]
	for j, m := range matches {
		if j == driver || j == free {
			continue
		}
		keep := cand[:0:0]
		for _, o := range cand {
			for _, id := range m {
				if _, ok := slices.BinarySearch(x.postings(id), o); ok {
					keep = append(keep, o)
					break
				}
			}
		}
		cand = keep
	}
	return cand[:min(len(cand), maxVerified)]
}
