package nametable

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// FoldVersion numbers what Fold does. Name tables and bleve indexes hold
// folded names, so a generation built with another version is rebuilt in
// full rather than served or patched (indexer.Meta.Fold).
//
//	1  full case folding, then NFC
//	2  as 1, and the dot above after i dropped: "İ" folds to plain "i"
const FoldVersion = 2

// FoldVersions are the folding Fold does and the foldings of the names
// this code searches correctly (only its own), for `gds version`.
func FoldVersions() (writes string, reads []string) {
	v := strconv.Itoa(FoldVersion)
	return v, []string{v}
}

// Fold returns the case-folded form of s that both indexing and searching
// compare: full Unicode case folding (so "ς" and "Σ" fold to "σ", "ß" to
// "ss"), then NFC so composed and decomposed spellings agree. The Turkish
// dotted capital "İ" folds to "i" + U+0307; the combining dot is dropped so
// "ilkay" finds "İlkay" (it adds nothing to an i). ASCII, the common case,
// takes a fast path without allocation when already lower.
func Fold(s string) string {
	ascii, lower := true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			lower = false
		}
	}
	if ascii {
		if lower {
			return s
		}
		b := make([]byte, len(s))
		for i := 0; i < len(s); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b[i] = c
		}
		return string(b)
	}
	c := folders.Get().(*cases.Caser)
	out := c.String(s)
	folders.Put(c)
	if strings.Contains(out, dotAfterI) {
		out = strings.ReplaceAll(out, dotAfterI, "i")
	}
	return norm.NFC.String(out)
}

// AppendFold appends Fold(s) to dst: an ASCII s without allocating, for
// callers that fold many names into one buffer.
func AppendFold(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(dst, Fold(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// dotAfterI is "i" and COMBINING DOT ABOVE, what case folding makes of "İ"
// (and of "I" + U+0307, its decomposed spelling).
const dotAfterI = "i\u0307"

// A cases.Caser keeps state, so each goroutine borrows its own.
var folders = sync.Pool{New: func() any { c := cases.Fold(); return &c }}
