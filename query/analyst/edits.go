package analyst

// withinEdits reports whether a and b are at most k edits apart, as
// bleve's fuzzy terms count them (its Levenshtein automaton): inserting,
// deleting or replacing a character, or swapping two adjacent ones.
func withinEdits(a, b []byte, k int) bool {
	return newEditMatcher(a, k).match(b)
}

// editMatcher compares words with one term within k edits, reusing its
// rows: a fuzzy clause compares every word of every name (10M names).
type editMatcher struct {
	term             []byte
	runes            []rune
	ascii            bool
	k                int
	prev2, prev, cur []int
	wordRunes        []rune
}

func newEditMatcher(term []byte, k int) *editMatcher {
	m := &editMatcher{term: term, runes: []rune(string(term)), ascii: isASCII(term), k: k}
	return m
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// distance reports whether the optimal string alignment distance of two
// sequences of lengths la and lb (eq compares their elements) is at most
// k, in three reused rows, stopping once a row exceeds k.
func (m *editMatcher) distance(la, lb int, eq func(i, j int) bool) bool {
	k := m.k
	w := lb + 1
	if cap(m.cur) < w {
		m.prev2, m.prev, m.cur = make([]int, w), make([]int, w), make([]int, w)
	}
	prev2, prev, cur := m.prev2[:w], m.prev[:w], m.cur[:w]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= la; i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= lb; j++ {
			cost := 1
			if eq(i-1, j-1) {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && eq(i-1, j-2) && eq(i-2, j-1) {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			best = min(best, cur[j])
		}
		if best > k {
			return false
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[lb] <= k
}

// match reports whether w is within k edits of the term. Not safe for
// concurrent use.
func (m *editMatcher) match(w []byte) bool {
	if m.ascii && isASCII(w) {
		if d := len(m.term) - len(w); d > m.k || -d > m.k {
			return false
		}
		return m.distance(len(m.term), len(w), func(i, j int) bool { return m.term[i] == w[j] })
	}
	m.wordRunes = append(m.wordRunes[:0], []rune(string(w))...)
	rb := m.wordRunes
	if d := len(m.runes) - len(rb); d > m.k || -d > m.k {
		return false
	}
	return m.distance(len(m.runes), len(rb), func(i, j int) bool { return m.runes[i] == rb[j] })
}
