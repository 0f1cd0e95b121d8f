package indexer

import (
	"sync"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Fold returns the case-folded form of s that both indexing and searching
// compare: full Unicode case folding (so "ς" and "Σ" fold to "σ", "ß" to
// "ss"), then NFC so composed and decomposed spellings agree. ASCII, the
// common case, takes a fast path without allocation when already lower.
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
	return norm.NFC.String(out)
}

// A cases.Caser keeps state, so each goroutine borrows its own.
var folders = sync.Pool{New: func() any { c := cases.Fold(); return &c }}
