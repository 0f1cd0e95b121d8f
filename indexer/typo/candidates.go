package typo

import (
	"math"
	"slices"
)

// candidates sets s.cand to the ordinals a walk verifies: in ascending
// order, of the first maxCandidates distinct ordinals of the driver's
// lists (each cut at maxCandidates), those in a list of every other word
// of matches but free's, at most maxVerified of them. The driver's lists
// are merged (a heap), not concatenated and sorted, and the others'
// searched by galloping, not merged whole: a walk reads its lists as far
// as the ordinals it keeps, however long they grow with the table.
func (s *searcher) candidates(matches [][]uint32, driver, free int) {
	s.heap = s.heap[:0]
	for _, id := range matches[driver] {
		if p := s.x.postings(id); len(p) > 0 {
			s.heap = append(s.heap, p[:min(len(p), maxCandidates)])
		}
	}
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		siftDown(s.heap, i)
	}
	s.lists, s.ends = s.lists[:0], s.ends[:0]
	for j, m := range matches {
		if j == driver || j == free {
			continue
		}
		for _, id := range m {
			s.lists = append(s.lists, s.x.postings(id))
		}
		s.ends = append(s.ends, len(s.lists))
	}
	s.floors = append(s.floors[:0], make([]uint32, len(s.ends))...)
	s.cand = s.cand[:0]
	taken, last := 0, uint32(0)
	for len(s.heap) > 0 && taken < maxCandidates && len(s.cand) < maxVerified {
		o := s.heap[0][0]
		if s.heap[0] = s.heap[0][1:]; len(s.heap[0]) == 0 {
			s.heap[0] = s.heap[len(s.heap)-1]
			s.heap = s.heap[:len(s.heap)-1]
		}
		siftDown(s.heap, 0)
		if taken > 0 && o == last {
			continue // in more than one of the driver's lists
		}
		taken, last = taken+1, o
		in, more := s.inOthers(o)
		if in {
			s.cand = append(s.cand, o)
		}
		if !more {
			break
		}
	}
}

// inOthers reports whether o is in a list of every other word, dropping
// the ordinals below o from the lists it searches (the walk asks in
// ascending order); more is false when no ordinal above o can be (a word
// with every list spent). A word without o keeps its lists' least
// ordinal past o (floors): the ordinals below it are not in the word,
// whose lists are not searched again until the walk reaches it.
func (s *searcher) inOthers(o uint32) (in, more bool) {
	for _, f := range s.floors {
		if o < f {
			return false, true
		}
	}
	start := 0
	for w, end := range s.ends {
		found, left, least := false, false, uint32(math.MaxUint32)
		for i := start; i < end && !found; i++ {
			p := seek(s.lists[i], o)
			s.lists[i] = p
			if len(p) > 0 {
				left, found, least = true, p[0] == o, min(least, p[0])
			}
		}
		if !found {
			s.floors[w] = least
			return false, left
		}
		start = end
	}
	return true, true
}

// seek drops the ordinals of p (ascending) below o: steps that double
// until one passes o, then a binary search within the last.
func seek(p []uint32, o uint32) []uint32 {
	if len(p) == 0 || p[0] >= o {
		return p
	}
	lo, step := 0, 1 // p[lo] < o
	for lo+step < len(p) && p[lo+step] < o {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(p))
	i, _ := slices.BinarySearch(p[lo+1:hi], o)
	return p[lo+1+i:]
}

// siftDown restores the heap order (by first ordinal) of h below i.
func siftDown(h [][]uint32, i int) {
	for {
		least := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h) && h[c][0] < h[least][0] {
				least = c
			}
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}
