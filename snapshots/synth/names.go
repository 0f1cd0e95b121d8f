package synth

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxNameRunes is the game's limit on character names.
const maxNameRunes = 37

// nameGen draws names from one random stream. It remembers a few recent
// names so that it can repeat one now and then: real names are almost,
// but not quite, unique.
type nameGen struct {
	rng    *rand.Rand
	recent [64]string
	n      int
}

func newNameGen(rng *rand.Rand) *nameGen { return &nameGen{rng: rng} }

// Syllables joins n syllables drawn from syl by rng: made-up words in
// bulk, for the tests and benchmarks of name tables and indexes.
func Syllables(rng *rand.Rand, n int, syl ...string) string {
	var b strings.Builder
	for range n {
		b.WriteString(syl[rng.IntN(len(syl))])
	}
	return b.String()
}

func (g *nameGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

// character returns a pilot name in the style of culture c.
func (g *nameGen) character(c culture) string {
	var name string
	if g.n > 0 && g.rng.IntN(1000) < 3 {
		name = g.recent[g.rng.IntN(min(g.n, len(g.recent)))]
	} else {
		name = g.freshCharacter(c)
	}
	g.recent[g.n%len(g.recent)] = name
	g.n++
	return name
}

func (g *nameGen) freshCharacter(c culture) string {
	first, last := g.pick(firstNames[c]), g.surname(c)
	if g.rng.IntN(10) == 0 { // empires mix
		last = g.surname(culture(g.rng.IntN(int(numCultures))))
	}
	var name string
	switch r := g.rng.IntN(1000); {
	case r < 5:
		name = g.pick(unicodeFirst) + " " + g.pick(unicodeLast)
	case r < 10:
		name = first + " " + g.pick(unicodeLast)
	case r < 50:
		name = g.single(first, last)
	case r < 85:
		name = g.gamerTag()
	case r < 115:
		name = g.oddCase(first, last)
	case r < 140:
		name = first + " " + g.pick(firstNames[c]) + " " + last
	case r < 165:
		name = first + " " + g.prefixed(last)
	case r < 180:
		name = first + " " + last + "-" + g.pick(lastNames[g.rng.IntN(int(numCultures))])
	default:
		name = first + " " + last
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = first + " " + last
	}
	return name
}

// surname is a listed surname or, three times as often, a made-up one.
func (g *nameGen) surname(c culture) string {
	if g.rng.IntN(4) == 0 {
		return g.pick(lastNames[c])
	}
	syl := &surnameSyllables[c]
	return g.pick(syl[0]) + g.pick(syl[1]) + g.pick(syl[2])
}

// prefixed adds a clan prefix to a surname, sometimes lowercasing the rest
// as players do (O'mally).
func (g *nameGen) prefixed(last string) string {
	prefix := g.pick([]string{"O'", "D'", "Al'", "Mc", "Van ", "De "})
	if strings.HasSuffix(prefix, "'") && g.rng.IntN(2) == 0 {
		last = strings.ToLower(last[:1]) + last[1:]
	}
	return prefix + last
}

// single is a one-word name: a first name, a surname or a made-up handle.
func (g *nameGen) single(first, last string) string {
	switch g.rng.IntN(8) {
	case 0:
		return first
	case 1:
		return last
	}
	return g.pick(handleParts) + strings.ToLower(g.pick(handleParts))
}

// gamerTag is the kind of name that carries digits: Darkstar2001,
// xXPilot99Xx, Ramm123.
func (g *nameGen) gamerTag() string {
	word := g.pick(handleParts)
	switch g.rng.IntN(4) {
	case 0:
		return "xX" + word + strconv.Itoa(g.rng.IntN(100)) + "Xx"
	case 1:
		return word + strings.ToLower(g.pick(handleParts)) + strconv.Itoa(1970+g.rng.IntN(40))
	case 2:
		return word + strconv.Itoa(g.rng.IntN(1000))
	}
	return g.pick(firstNames[g.rng.IntN(int(numCultures))]) + " " + word + strconv.Itoa(g.rng.IntN(10))
}

// oddCase writes a name in the case players actually type.
func (g *nameGen) oddCase(first, last string) string {
	switch g.rng.IntN(4) {
	case 0:
		return strings.ToLower(first + " " + last)
	case 1:
		return strings.ToUpper(first + " " + last)
	case 2:
		return strings.ToLower(first[:1]) + first[1:] + " " + last
	}
	return first + " " + strings.ToUpper(last)
}

// corporation returns a corporation name.
func (g *nameGen) corporation() string {
	switch r := g.rng.IntN(100); {
	case r < 45:
		return joinWords(g.pick(orgAdjectives), g.pick(orgNouns), g.pick(corpSuffixes))
	case r < 60:
		return joinWords(g.pick(lastNames[g.rng.IntN(int(numCultures))]), g.pick(orgNouns), g.pick(corpSuffixes))
	case r < 70:
		return joinWords("The", g.pick(orgAdjectives), g.pick(orgNouns))
	case r < 78:
		return joinWords("Sector", strconv.Itoa(1+g.rng.IntN(99)), g.pick(orgNouns))
	case r < 85:
		return strings.ToLower(g.pick(handleParts) + g.pick(handleParts))
	case r < 92:
		return joinWords(g.pick(firstNames[g.rng.IntN(int(numCultures))])+"'s", g.pick(orgNouns))
	}
	return joinWords(g.pick(orgAdjectives), g.pick(orgNouns))
}

// alliance returns an alliance name.
func (g *nameGen) alliance() string {
	switch r := g.rng.IntN(100); {
	case r < 55:
		return joinWords(g.pick(orgAdjectives), g.pick(allianceSuffixes[:len(allianceSuffixes)-2]))
	case r < 75:
		return joinWords(g.pick(orgAdjectives), g.pick(orgNouns), g.pick(allianceSuffixes))
	case r < 85:
		return joinWords("The", g.pick(orgNouns), g.pick(allianceSuffixes))
	case r < 93:
		return g.pick(handleParts) + strings.ToLower(g.pick(handleParts)) + " " + g.pick(allianceSuffixes[:len(allianceSuffixes)-2])
	}
	return joinWords(g.pick(orgAdjectives), g.pick(orgNouns), ".")
}

// ticker derives a ticker of at most maxLen characters from a name's
// initials, padded and decorated as players do ("DCMI", "-A-", "B.R.A").
func (g *nameGen) ticker(name string, maxLen int) string {
	var b []byte
	for _, w := range strings.Fields(name) {
		if c := w[0]; c < utf8.RuneSelf && (isAlnum(c)) {
			b = append(b, upper(c))
		}
	}
	const pad = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for len(b) < 2+g.rng.IntN(3) {
		b = append(b, pad[g.rng.IntN(len(pad))])
	}
	if len(b) > maxLen {
		b = b[:maxLen]
	}
	switch r := g.rng.IntN(20); {
	case r == 0 && len(b) <= maxLen-2:
		b = append(append([]byte{'-'}, b...), '-')
	case r == 1 && len(b) >= 2 && len(b) < maxLen:
		b = append(b[:1], append([]byte{'.'}, b[1:]...)...)
	case r == 2 && len(b) < maxLen:
		b = append(b, '.')
	}
	return string(b)
}

// structure returns the part of a structure name after "<System> - ".
func (g *nameGen) structure(ticker string) string {
	switch g.rng.IntN(5) {
	case 0:
		return ticker + " " + g.pick(structureWords)
	case 1:
		return joinWords(g.pick(orgAdjectives), g.pick(structureWords))
	}
	return g.pick(structureWords)
}

func joinWords(words ...string) string {
	var b strings.Builder
	for _, w := range words {
		if w == "" {
			continue
		}
		if b.Len() > 0 && w != "." {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
