package api

import (
	"net/url"
	"strings"
)

// queryError is the error url.ParseQuery reports for the query string q,
// or nil. A query string without a semicolon, whose escapes are all
// well formed and with far fewer parameters than url's limit, parses
// without error, which is checked here without allocating; anything else
// is left to url.ParseQuery, so the errors are the standard library's own.
func queryError(q string) error {
	if wellFormedQuery(q) {
		return nil
	}
	_, err := url.ParseQuery(q)
	return err
}

// maxQuickParams is how many parameters wellFormedQuery accepts on its
// own, well below url's limit on a query's parameters.
const maxQuickParams = 1000

func wellFormedQuery(q string) bool {
	// Each request asks for several parameters, each checking the query:
	// the byte searches here run on vectors.
	if strings.IndexByte(q, ';') >= 0 || strings.Count(q, "&") >= maxQuickParams {
		return false
	}
	for rest := q; ; {
		i := strings.IndexByte(rest, '%')
		if i < 0 {
			return true
		}
		if i+2 >= len(rest) || !isHex(rest[i+1]) || !isHex(rest[i+2]) {
			return false
		}
		rest = rest[i+3:]
	}
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// lookupQuery returns the unescaped value of the first parameter named
// name in the well-formed query string q and how many times name is
// given, as url.ParseQuery would count them (keys compared unescaped). It
// allocates only for a value or key with escapes or '+'.
func lookupQuery(q, name string) (value string, n int) {
	var first string
	for q != "" {
		piece := q
		if i := strings.IndexByte(q, '&'); i >= 0 {
			piece, q = q[:i], q[i+1:]
		} else {
			q = ""
		}
		if piece == "" {
			continue
		}
		key, v := piece, ""
		if i := strings.IndexByte(piece, '='); i >= 0 {
			key, v = piece[:i], piece[i+1:]
		}
		if !queryKeyIs(key, name) {
			continue
		}
		if n++; n == 1 {
			first = v
		}
	}
	if n == 0 {
		return "", 0
	}
	value, _ = url.QueryUnescape(first) // well formed: no error
	return value, n
}

// lookupQueryAll returns the unescaped values of every parameter named
// name in the well-formed query string q, in order.
func lookupQueryAll(q, name string) []string {
	var out []string
	for piece := range strings.SplitSeq(q, "&") {
		key, v, _ := strings.Cut(piece, "=")
		if piece != "" && queryKeyIs(key, name) {
			v, _ = url.QueryUnescape(v) // well formed: no error
			out = append(out, v)
		}
	}
	return out
}

// queryKeyIs reports whether the raw key names name once unescaped; only
// a key with escapes or '+' is unescaped to find out.
func queryKeyIs(key, name string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] == '%' || key[i] == '+' {
			k, err := url.QueryUnescape(key)
			return err == nil && k == name
		}
	}
	return key == name
}
