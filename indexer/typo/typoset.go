package typo

import (
	"math/rand/v2"
	"unicode/utf8"

	"gds/snapshots"
)

// Named is a name with its ID, as a typo set is drawn from.
type Named struct {
	ID   int64
	Name string
}

// Misspelled is a name and a text one edit away from it.
type Misspelled struct {
	ID   int64
	Name string
	Text string
}

// MisspellSet draws n names of at least minRunes runes from names
// (deterministically for a seed and the same list in the same order) and
// makes one edit to each: a rune inserted, deleted or replaced (by a
// lower-case letter), or two neighbours swapped, at a random place. The
// quality benchmark asks the suggest route for each text and looks for
// the name's ID in its top ten; the same set is given to PostgreSQL.
func MisspellSet(names []Named, n, minRunes int, seed uint64) []Misspelled {
	var pool []int
	for i, nm := range names {
		if utf8.RuneCountInString(nm.Name) >= minRunes {
			pool = append(pool, i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := make([]Misspelled, 0, min(n, len(pool)))
	for len(out) < n && len(pool) > 0 {
		j := rng.IntN(len(pool))
		nm := names[pool[j]]
		pool[j] = pool[len(pool)-1]
		pool = pool[:len(pool)-1]
		if t := Misspell(nm.Name, rng); t != nm.Name {
			out = append(out, Misspelled{ID: nm.ID, Name: nm.Name, Text: t})
		}
	}
	return out
}

// Misspell makes one random edit to s (see MisspellSet).
func Misspell(s string, rng *rand.Rand) string {
	rs := []rune(s)
	letter := 'a' + rune(rng.IntN(26))
	switch op := rng.IntN(4); {
	case op == 0: // insert
		i := rng.IntN(len(rs) + 1)
		rs = append(rs[:i], append([]rune{letter}, rs[i:]...)...)
	case op == 1 && len(rs) > 1: // delete
		i := rng.IntN(len(rs))
		rs = append(rs[:i], rs[i+1:]...)
	case op == 2 || len(rs) < 2: // replace
		i := rng.IntN(len(rs))
		if rs[i] == letter {
			letter = 'a' + (letter-'a'+1)%26
		}
		rs[i] = letter
	default: // swap neighbours
		i := rng.IntN(len(rs) - 1)
		rs[i], rs[i+1] = rs[i+1], rs[i]
	}
	return string(rs)
}

// MisspellSnapshot draws MisspellSet(n, minRunes, seed) from the
// characters of the snapshot in dir (read in key order, so the set
// depends only on the snapshot and the seed): the benchmark's typo set.
func MisspellSnapshot(dir string, n, minRunes int, seed uint64) ([]Misspelled, error) {
	snap, err := snapshots.Open(dir)
	if err != nil {
		return nil, err
	}
	var names []Named
	err = snap.Each(snapshots.Characters, func(rec snapshots.Record, _ snapshots.Line) error {
		c := rec.(*snapshots.Character)
		names = append(names, Named{ID: c.ID, Name: c.Name})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return MisspellSet(names, n, minRunes, seed), nil
}
