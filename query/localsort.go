package query

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
)

// A local's thousand pilots and their corporations are sorted by name
// (the corporations by count first). Sorting the structs themselves moves
// each of them some ten times, each move of their strings a write barrier
// while the collector runs, and compares whole names; sortLocal sorts a
// small key of each instead (its rank, its name's first 16 bytes as
// integers, its index), compares the items themselves only when two keys
// tie, and moves each item once.

// sortKey is what sortLocal sorts of an item.
type sortKey struct {
	hi, lo uint64 // the name's first 16 bytes, big-endian, zero-padded
	rank   uint32 // before the name: lower first
	i      int32  // the item's index
}

// sortLocal sorts list by rank, then name, then compare (the whole order,
// consistent with the first two: rank and name decide where they differ).
func sortLocal[T any](list []T, rank func(*T) uint32, name func(*T) string, compare func(a, b T) int) {
	keys := make([]sortKey, len(list))
	for i := range list {
		hi, lo := namePrefix(name(&list[i]))
		keys[i] = sortKey{hi: hi, lo: lo, rank: rank(&list[i]), i: int32(i)}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return compare(list[a.i], list[b.i])
	})
	permute(list, keys)
}

// permute moves list[keys[k].i] to list[k], each item once, following
// the permutation's cycles (keys' indexes are spent).
func permute[T any](list []T, keys []sortKey) {
	for start := range keys {
		if keys[start].i < 0 {
			continue
		}
		held, k := list[start], start
		for {
			from := int(keys[k].i)
			keys[k].i = -1
			if from == start {
				list[k] = held
				break
			}
			list[k], k = list[from], from
		}
	}
}

// namePrefix is s's first 16 bytes as two big-endian integers, padded
// with zeros: where two names' prefixes differ, they order as the names.
func namePrefix(s string) (hi, lo uint64) {
	var b [16]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// byCountRank ranks a group of count members: most first.
func byCountRank(count int) uint32 { return math.MaxUint32 - uint32(min(count, math.MaxUint32)) }
