package typo

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// Edits is how many edits a word of n runes tolerates, as Typesense and
// Meilisearch count them: none below 5 runes, one for 5 to 8, two from 9.
func Edits(n int) int {
	switch {
	case n >= 9:
		return 2
	case n >= 5:
		return 1
	}
	return 0
}

// DictDeletes is how many runes the index deletes from a word of n runes:
// enough for any query word whose budget reaches it (a query word of 9
// runes, two edits, reaches words of 7; one of 5 reaches words of 4).
func DictDeletes(n int) int {
	switch {
	case n >= 7:
		return 2
	case n >= 4:
		return 1
	}
	return 0
}

// isWordRune reports whether r belongs to a word: letters and digits.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// eachWord calls fn with each word of s (runs of letters and digits) and
// where it starts.
func eachWord(s []byte, fn func(w []byte, at int)) {
	start := -1
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(s[i:])
		}
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			fn(s[start:i], start)
			start = -1
		}
		i += size
	}
	if start >= 0 {
		fn(s[start:], start)
	}
}

// Words returns the words of a folded name, as the index splits it.
func Words(s string) []string {
	var out []string
	eachWord([]byte(s), func(w []byte, _ int) { out = append(out, string(w)) })
	return out
}

func hash32(b []byte) uint32 { return uint32(xxhash.Sum64(b) >> 32) }

// deletions calls fn with the hash of w and of every spelling of w with up
// to k runes deleted (a spelling reached twice may be passed twice). buf
// is scratch.
func deletions(w []byte, k int, buf []byte, fn func(h uint32)) []byte {
	fn(hash32(w))
	if k == 0 {
		return buf
	}
	var starts [64]int
	rs := starts[:0]
	for i := range w {
		if utf8.RuneStart(w[i]) {
			rs = append(rs, i)
			if len(rs) == len(starts) {
				return buf // a word this long is only found whole
			}
		}
	}
	n := len(rs)
	end := func(i int) int {
		if i+1 < n {
			return rs[i+1]
		}
		return len(w)
	}
	for i := range n {
		buf = append(append(buf[:0], w[:rs[i]]...), w[end(i):]...)
		fn(hash32(buf))
		if k < 2 {
			continue
		}
		for j := i + 1; j < n; j++ {
			buf = append(append(append(buf[:0], w[:rs[i]]...), w[end(i):rs[j]]...), w[end(j):]...)
			fn(hash32(buf))
		}
	}
	return buf
}

// Distance is the optimal string alignment distance (Damerau–Levenshtein
// with adjacent transpositions, each substring edited once) between a and
// b, in runes, or max+1 when it exceeds max. Only the cells of the table
// within max of its diagonal are computed (an alignment through any other
// costs more than max); those beside them count as max+1.
func Distance(a, b []rune, max int) int {
	la, lb := len(a), len(b)
	if d := la - lb; d > max || -d > max {
		return max + 1
	}
	if la == 0 || lb == 0 {
		return la + lb
	}
	var rowsBuf [3][48]int
	var prev2, prev, cur []int
	if lb < len(rowsBuf[0]) {
		prev2, prev, cur = rowsBuf[0][:lb+1], rowsBuf[1][:lb+1], rowsBuf[2][:lb+1]
	} else {
		prev2, prev, cur = make([]int, lb+1), make([]int, lb+1), make([]int, lb+1)
	}
	over := max + 1
	for j := range prev {
		prev[j] = min(j, over)
	}
	for i := 1; i <= la; i++ {
		lo, hi := i-max, min(lb, i+max)
		if lo <= 1 {
			lo, cur[0] = 1, min(i, over)
		} else {
			cur[lo-1] = over
		}
		best := over
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			best = min(best, v)
		}
		if hi < lb {
			cur[hi+1] = over
		}
		if best > max {
			return over
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[lb], over)
}

// appendRunes appends the runes of b to rs.
func appendRunes(rs []rune, b []byte) []rune {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		rs = append(rs, r)
		i += size
	}
	return rs
}

// BeginsWord reports whether text occurs in name where a word of it
// begins (at its start, or after a rune that is not a letter or digit).
func BeginsWord(name, text []byte) bool {
	if len(text) == 0 {
		return false
	}
	for at := 0; at <= len(name)-len(text); {
		i := bytes.Index(name[at:], text)
		if i < 0 {
			return false
		}
		i += at
		if r, _ := utf8.DecodeLastRune(name[:i]); i == 0 || !isWordRune(r) {
			return true
		}
		_, size := utf8.DecodeRune(name[i:])
		at = i + size
	}
	return false
}
