package synth

import (
	"fmt"
	"math/bits"
)

// The ID ranges the game uses for player entities. Characters first fill
// the range of 2010–2016 and then continue in the one used since 2016;
// beyond what those two hold (about 43M), the rest take the range of the
// characters, corporations and alliances created before 2010. Every range
// stays below 2^31 because ESI declares character IDs as int32.
const (
	charRange1Lo  = 90_000_000
	charRange1Hi  = 98_000_000
	charRange0Lo  = 100_000_000
	charRange0Hi  = 2_100_000_000
	charRange2Lo  = 2_112_000_000
	charRange2Hi  = 2_147_483_647
	corpLo        = 98_000_000
	corpHi        = 99_000_000
	allianceLo    = 99_000_000
	allianceHi    = 100_000_000
	structureLo   = 1_000_000_000_000
	structureStep = 1_000_000 // average distance between two structure IDs

	// Capacities: a generated ID never leaves its range.
	maxCharacters   = (charRange1Hi - charRange1Lo) + (charRange0Hi - charRange0Lo) + (charRange2Hi - charRange2Lo)
	maxCorporations = corpHi - corpLo
	maxAlliances    = allianceHi - allianceLo
)

// Salts separate the independent hash streams derived from one seed, so
// changing one count never reshuffles what another kind looks like.
const (
	saltCharID uint64 = iota + 1
	saltCorpID
	saltAllianceID
	saltStructureID
	saltRole
	saltCorpFounded
	saltCorpSize
	saltAlliancePick
	saltPerm
	saltCharStream
	saltCorpStream
	saltAllianceStream
	saltStructureStream
	saltDocStream
)

// mix is the splitmix64 finaliser over (seed, salt, i): a stateless hash
// for decisions that must be recomputable for any index in any order (a
// character's ID is needed when its corporation and structures are written,
// long before or after the character itself).
func mix(seed, salt, i uint64) uint64 {
	z := seed ^ (salt * 0x9e3779b97f4a7c15) ^ (i * 0xbf58476d1ce4e5b9)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// below returns a number in [0, n) from a hash value (n > 0).
func below(h uint64, n uint64) uint64 {
	hi, _ := bits.Mul64(h, n)
	return hi
}

// idSpace spreads n ascending IDs over [lo, hi): ID j lies somewhere in its
// own slot [lo+j*step, lo+(j+1)*step), so IDs are strictly ascending,
// irregularly spaced and computable from j alone.
type idSpace struct {
	seed, salt uint64
	lo, step   int64
}

func newIDSpace(seed, salt uint64, lo, hi, n int64) idSpace {
	step := int64(1)
	if n > 0 {
		step = max((hi-lo)/n, 1)
	}
	return idSpace{seed: seed, salt: salt, lo: lo, step: step}
}

func (s idSpace) id(j int64) int64 {
	return s.lo + j*s.step + int64(below(mix(s.seed, s.salt, uint64(j)), uint64(s.step)))
}

// charIDs places characters in the character ranges: two fifths in the
// range of 2010–2016 (capped by its size), the rest in the one used since
// 2016, like a server that has been running for two decades; what neither
// holds goes to the range before 2010, between the two in ID order.
type charIDs struct {
	n1, n0 int64
	old    idSpace
	early  idSpace
	new_   idSpace
}

func newCharIDs(seed uint64, n int64) (charIDs, error) {
	if n > maxCharacters {
		return charIDs{}, fmt.Errorf("%d characters do not fit the character ID ranges (at most %d)", n, maxCharacters)
	}
	n1 := min(n*2/5, charRange1Hi-charRange1Lo)
	if n-n1 > charRange2Hi-charRange2Lo {
		n1 = min(n-(charRange2Hi-charRange2Lo), charRange1Hi-charRange1Lo)
	}
	n0 := max(n-n1-(charRange2Hi-charRange2Lo), 0)
	n2 := n - n1 - n0
	// Keep new-range IDs near its start for small counts, as the live game's are.
	hi2 := min(int64(charRange2Hi), charRange2Lo+max(n2*4, 30_000_000))
	return charIDs{
		n1:    n1,
		n0:    n0,
		old:   newIDSpace(seed, saltCharID, charRange1Lo, charRange1Hi, n1),
		early: newIDSpace(seed, saltCharID+2000, charRange0Lo, charRange0Hi, n0),
		new_:  newIDSpace(seed, saltCharID+1000, charRange2Lo, hi2, n2),
	}, nil
}

func (c charIDs) id(j int64) int64 {
	switch {
	case j < c.n1:
		return c.old.id(j)
	case j < c.n1+c.n0:
		return c.early.id(j - c.n1)
	}
	return c.new_.id(j - c.n1 - c.n0)
}

// perm is a bijection of [0, n) (i -> a*i+b mod n). Corporations own
// consecutive blocks of permuted positions, so a corporation's members are
// scattered over the character IDs yet both directions (character -> its
// corporation, corporation -> its members) cost O(1) memory.
type perm struct {
	n, a, b, inv int64
}

func newPerm(seed uint64, n int64) perm {
	if n <= 1 {
		return perm{n: n, a: 1, inv: 1}
	}
	// Start near the golden ratio of n so neighbours land far apart.
	a := int64(float64(n)*0.6180339887) | 1
	a += 2 * int64(below(mix(seed, saltPerm, 0), 64))
	for gcd(a%n, n) != 1 {
		a++
	}
	a %= n
	b := int64(below(mix(seed, saltPerm, 1), uint64(n)))
	return perm{n: n, a: a, b: b, inv: modInverse(a, n)}
}

// forward maps a character index to its position.
func (p perm) forward(i int64) int64 { return mulMod(p.a, i, p.n, p.b) }

// backward maps a position to the character index.
func (p perm) backward(pos int64) int64 {
	return mulMod(p.inv, (pos-p.b+p.n)%p.n, p.n, 0)
}

func mulMod(a, x, n, add int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(x))
	_, rem := bits.Div64(hi%uint64(n), lo, uint64(n))
	return int64((rem + uint64(add)) % uint64(n))
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func modInverse(a, n int64) int64 {
	// Extended Euclid; a and n are coprime.
	t, newT := int64(0), int64(1)
	r, newR := n, a
	for newR != 0 {
		q := r / newR
		t, newT = newT, t-q*newT
		r, newR = newR, r-q*newR
	}
	if t < 0 {
		t += n
	}
	return t
}
