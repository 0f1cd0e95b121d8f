package query

import (
	"encoding/binary"
	"math"
	"slices"
)

// A local's thousand pilots and their corporations are sorted by name
// (the corporations by count first). Sorting the structs themselves moves
// each of them some ten times, each move of their strings a write barrier
// while the collector runs, and compares whole names through a function;
// sortLocal sorts integers instead (each item's name's first six bytes
// and its index, then the next six of a run that shares them, …),
// compares the items themselves only where names are equal, and moves
// each item once.

// maxSortKeyed is the most items sortLocal sorts by integer keys: an
// index takes 16 bits of a key.
const maxSortKeyed = 1<<16 - 1

// sortLocal sorts list by rank (lower first), then by compare, an order
// of the items by name first: strings.Compare of their names decides
// where it is not 0.
func sortLocal[T any](list []T, rank func(*T) uint32, name func(*T) string, compare func(a, b *T) int) {
	n := len(list)
	if n > maxSortKeyed {
		slices.SortFunc(list, func(a, b T) int {
			if ra, rb := rank(&a), rank(&b); ra != rb {
				return int(int64(ra) - int64(rb))
			}
			return compare(&a, &b)
		})
		return
	}
	keysP, buf := uint64Scratch.get(n), uint64Scratch.get(n)
	defer uint64Scratch.put(keysP)
	defer uint64Scratch.put(buf)
	keys := *keysP
	for i := range keys {
		keys[i] = uint64(i)
	}
	sortNames(keys, *buf, list, name, compare, 0)
	// Then by rank, the place in the order by name (the keys' middle
	// bytes, ascending already) deciding a tie.
	ranked, first := false, uint32(0)
	for p, k := range keys {
		r := rank(&list[k&0xffff])
		if p == 0 {
			first = r
		}
		ranked = ranked || r != first
		keys[p] = uint64(r)<<32 | uint64(p)<<16 | k&0xffff
	}
	if ranked {
		radixSortFrom(keys, *buf, 4)
	}
	permute(list, keys)
}

// sortNames orders keys (each an item's index in its low 16 bits) by
// their items' names from byte off on, names that share their first off
// bytes: by six bytes at a time as integers, a run that shares them by
// the next six, and by compare where the names are equal.
//
// buf is room for radixSort.
func sortNames[T any](keys, buf []uint64, list []T, name func(*T) string, compare func(a, b *T) int, off int) {
	longest := 0
	for j, k := range keys {
		s := name(&list[k&0xffff])
		longest = max(longest, len(s))
		keys[j] = namePrefix(s[min(off, len(s)):])<<16 | k&0xffff
	}
	// The indexes, the keys' low two bytes, are ascending already: in
	// sortLocal's order at first, and a run's keep that order.
	radixSortFrom(keys, buf, 2)
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi]>>16 == keys[lo]>>16 {
			hi++
		}
		switch {
		case hi-lo == 1:
		case off+6 >= longest: // the run's names are equal, but for zero bytes
			slices.SortFunc(keys[lo:hi], func(a, b uint64) int { return compare(&list[a&0xffff], &list[b&0xffff]) })
		default:
			sortNames(keys[lo:hi], buf, list, name, compare, off+6)
		}
		lo = hi
	}
}

// permute moves list[keys[k]&0xffff] to list[k], each item once, following
// the permutation's cycles (keys are spent).
func permute[T any](list []T, keys []uint64) {
	const spent = math.MaxUint64
	for start := range keys {
		if keys[start] == spent {
			continue
		}
		held, k := list[start], start
		for {
			from := int(keys[k] & 0xffff)
			keys[k] = spent
			if from == start {
				list[k] = held
				break
			}
			list[k], k = list[from], from
		}
	}
}

// namePrefix is s's first six bytes as a big-endian integer, padded with
// zeros: where two names' prefixes differ, they order as the names.
func namePrefix(s string) uint64 {
	var b [8]byte
	copy(b[:6], s)
	return binary.BigEndian.Uint64(b[:]) >> 16
}

// byCountRank ranks a group of count members: most first.
func byCountRank(count int) uint32 { return math.MaxUint32 - uint32(min(count, math.MaxUint32)) }

// radixSort sorts keys as slices.Sort does: a local's thousand keys in a
// few passes over them, one per byte in which they differ (least
// significant first), where a comparison sort's branches, each as likely
// taken as not, cost more than the keys' reads. buf is room for as many
// keys.
func radixSort[K int64 | uint64](keys, buf []K) { radixSortFrom(keys, buf, 0) }

// radixSortFrom sorts keys as slices.Sort does, given that keys equal in
// their bytes from byte from (0 to 7, least significant first) up are in
// ascending order of their lower bytes already, as where each key's low
// bytes are its place in the list: those bytes then need no pass. One
// pass over the keys counts every byte at once; each byte in which they
// differ then takes one more.
func radixSortFrom[K int64 | uint64](keys, buf []K, from int) {
	if len(keys) < 64 {
		slices.Sort(keys)
		return
	}
	var flip uint64 // the sign bit of a signed key, so that it orders as unsigned
	if K(0)-1 < 0 {
		flip = 1 << 63
	}
	var counts [8][256]uint32
	for _, k := range keys {
		u := uint64(k) ^ flip
		counts[0][byte(u)]++
		counts[1][byte(u>>8)]++
		counts[2][byte(u>>16)]++
		counts[3][byte(u>>24)]++
		counts[4][byte(u>>32)]++
		counts[5][byte(u>>40)]++
		counts[6][byte(u>>48)]++
		counts[7][byte(u>>56)]++
	}
	first := uint64(keys[0]) ^ flip
	src, dst := keys, buf[:len(keys)]
	for b := from; b < 8; b++ {
		shift, count := 8*b, &counts[b]
		if int(count[byte(first>>shift)]) == len(src) {
			continue // every key has this byte
		}
		sum := uint32(0)
		for d, c := range count {
			count[d], sum = sum, sum+c
		}
		for _, k := range src {
			d := byte((uint64(k) ^ flip) >> shift)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}
