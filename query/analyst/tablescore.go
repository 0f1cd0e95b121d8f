package analyst

import (
	"gds/indexer"
	"math"

	bquery "github.com/blevesearch/bleve/v2/search/query"
)

// scoreOf is the score of ordinal o, which q matches (see the package's
// table queries: text matches of the name fields score, filters do not).
func (e *tableQuery) scoreOf(q bquery.Query, o uint32) float64 {
	var words [][]byte
	read := false
	return e.scoreWith(q, o, func() [][]byte {
		if !read {
			read = true
			_ = indexer.EachWord(e.tv.t.Name(o), func(w []byte) bool { words = append(words, w); return true })
		}
		return words
	})
}

func (e *tableQuery) scoreWith(q bquery.Query, o uint32, words func() [][]byte) float64 {
	if r, ok := e.rewritten[q]; ok {
		q = r
	}
	if l, ok := e.leaves[q]; ok {
		if !l.bm.Contains(o) {
			return 0
		}
		tf, n := 1.0, 1.0
		if l.field != indexer.FieldName {
			ws := words()
			n = float64(max(len(ws), 1))
			if l.term != nil {
				tf = 0
				for _, w := range ws {
					if l.term(w) {
						tf++
					}
				}
				tf = max(tf, 1)
			}
		}
		return l.boost * l.idf * math.Sqrt(tf) / math.Sqrt(n)
	}
	sum := func(qs []bquery.Query) (float64, int) {
		s, matched := 0.0, 0
		for _, c := range qs {
			if v := e.scoreWith(c, o, words); v > 0 {
				s += v
				matched++
			}
		}
		return s, matched
	}
	switch c := q.(type) {
	case *bquery.ConjunctionQuery:
		s, _ := sum(c.Conjuncts)
		return s
	case *bquery.DisjunctionQuery:
		s, matched := sum(c.Disjuncts)
		if len(c.Disjuncts) == 0 {
			return 0
		}
		return s * float64(matched) / float64(len(c.Disjuncts))
	case *bquery.BooleanQuery:
		s := 0.0
		for _, sub := range []bquery.Query{c.Must, c.Should} {
			if sub != nil {
				s += e.scoreWith(sub, o, words)
			}
		}
		return s
	}
	return 0
}
