//go:build bench

package bench

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// Query is one benchmark query with the hit count both systems must give.
type Query struct {
	Text   string `json:"text"`
	Strict bool   `json:"strict"`
	// Class says how it was made: short, long, whole, random, common, punct.
	Class string `json:"class"`
	// Want is min(500, matches) as PostgreSQL counts them; -1 until known.
	Want int `json:"want"`
}

// Fixed queries: very common trigrams and texts with punctuation and spaces.
var (
	commonTexts = []string{"ani", "ell", "the", "ara"}
	punctTexts  = []string{"O'm", "p An", "-Ka"}
)

// makeQueries builds n queries from sample names: about 60% substrings of
// 3–6 runes (some with changed case), 20% of 7–15 runes, 10% whole names
// (strict), 10% random 3–5 letter strings, plus the fixed texts.
func makeQueries(sample []string, n int, seed uint64) []Query {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var qs []Query
	for _, t := range commonTexts {
		qs = append(qs, Query{Text: t, Class: "common", Want: -1})
	}
	for _, t := range punctTexts {
		qs = append(qs, Query{Text: t, Class: "punct", Want: -1})
	}
	pickName := func(minRunes int) []rune {
		for tries := 0; ; tries++ {
			r := []rune(sample[rng.IntN(len(sample))])
			if len(r) >= minRunes || tries > 1000 {
				return r
			}
		}
	}
	// substring returns a substring of lo..hi runes that neither starts nor
	// ends with a space (gds trims the text; ILIKE would not).
	substring := func(lo, hi int) string {
		for {
			r := pickName(lo)
			l := lo + rng.IntN(hi-lo+1)
			if l > len(r) {
				l = len(r)
			}
			if l < 3 {
				continue
			}
			at := rng.IntN(len(r) - l + 1)
			s := string(r[at : at+l])
			if strings.TrimSpace(s) != s {
				continue
			}
			return s
		}
	}
	for len(qs) < n {
		switch p := rng.IntN(100); {
		case p < 60:
			qs = append(qs, Query{Text: changeCase(rng, substring(3, 6)), Class: "short", Want: -1})
		case p < 80:
			qs = append(qs, Query{Text: changeCase(rng, substring(7, 15)), Class: "long", Want: -1})
		case p < 90:
			name := strings.TrimSpace(string(pickName(3)))
			if utf8.RuneCountInString(name) < 3 {
				continue
			}
			qs = append(qs, Query{Text: changeCase(rng, name), Strict: true, Class: "whole", Want: -1})
		default:
			l := 3 + rng.IntN(3)
			b := make([]byte, l)
			for i := range b {
				b[i] = byte('a' + rng.IntN(26))
			}
			qs = append(qs, Query{Text: string(b), Class: "random", Want: -1})
		}
	}
	return qs
}

// changeCase changes the case of ASCII letters in a third of the texts:
// all upper, all lower, or swapped. Non-ASCII letters are left alone, as
// full case folding (gds) and lower() (PostgreSQL) differ on a few.
func changeCase(rng *rand.Rand, s string) string {
	if rng.IntN(3) != 0 {
		return s
	}
	mode := rng.IntN(3)
	b := []byte(s)
	for i, c := range b {
		lower, upper := 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z'
		switch {
		case mode == 0 && lower, mode == 2 && lower:
			b[i] = c - 'a' + 'A'
		case mode == 1 && upper, mode == 2 && upper:
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// likePattern is the ILIKE pattern for a contains search of text.
func likePattern(text string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(text) + "%"
}

// split returns the indexes of the contains and strict queries.
func split(qs []Query) (contains, strict []int) {
	for i, q := range qs {
		if q.Strict {
			strict = append(strict, i)
		} else {
			contains = append(contains, i)
		}
	}
	return
}
