package query

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// bruteRanked is the order a contains search promises, found by brute
// force over names (by ID, as searched: folded): the IDs of the names
// holding text, exact matches first, then prefixes, then the rest, each
// by length in runes, then by ID.
func bruteRanked(names map[int64]string, text string) []int64 {
	type ranked struct {
		class uint8
		runes int
		id    int64
	}
	var all []ranked
	for id, name := range names {
		var class uint8
		switch {
		case name == text:
			class = classExact
		case strings.HasPrefix(name, text):
			class = classPrefix
		case strings.Contains(name, text):
			class = classContains
		default:
			continue
		}
		all = append(all, ranked{class, utf8.RuneCountInString(name), id})
	}
	slices.SortFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.runes, b.runes), cmp.Compare(a.id, b.id))
	})
	ids := make([]int64, len(all))
	for i, r := range all {
		ids[i] = r.id
	}
	return ids
}

// BruteRankedForTest is bruteRanked, for the tests of Search.
var BruteRankedForTest = bruteRanked
