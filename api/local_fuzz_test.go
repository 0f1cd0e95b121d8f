package api

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"gds/query"
)

// FuzzLocalText: whatever a text body holds, ParseLocal either refuses it
// with a 400, 413 or 415 naming the problem, or returns 1 to 1,000 names,
// each its line trimmed, non-blank, valid UTF-8 and at most 100
// characters: the non-blank lines of the body, in order.
func FuzzLocalText(f *testing.F) {
	for _, s := range []string{"Alpha Pilot\nBeta Pilot\n", "\uFEFF a \r\n\r\n b", "", "\n\n", "x\xff", strings.Repeat("é", 101),
		strings.Repeat("a\n", 1001), "[\"not json\"", "\x00\n\t\v"} {
		f.Add(s, "text/plain; charset=utf-8")
		f.Add(s, "")
	}
	f.Add("Alpha", "image/png")
	f.Add("Alpha", "text/plain; charset")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		names, err := ParseLocal(contentType, strings.NewReader(body))
		if err != nil {
			requireBodyError(t, err)
			return
		}
		requireNames(t, names)
		if mt, _, _ := mime.ParseMediaType(contentType); mt == "text/plain" {
			var want []string
			for line := range strings.SplitSeq(strings.TrimPrefix(body, "\uFEFF"), "\n") {
				if line = strings.TrimSpace(line); line != "" {
					want = append(want, line)
				}
			}
			if !slices.Equal(names, want) {
				t.Fatalf("%q: names %q, want the body's non-blank lines %q", body, names, want)
			}
		}
	})
}

// FuzzLocalJSON: a JSON body is refused, or is an array of strings whose
// non-blank ones, trimmed, are the names, as encoding/json reads them.
func FuzzLocalJSON(f *testing.F) {
	for _, s := range []string{`["Alpha Pilot","Beta Pilot"]`, `[]`, `[""]`, `["a", 1]`, `{"a":1}`, `["\ud800"]`, `["a\u0000b"]`,
		`[" x "]`, `["` + strings.Repeat("x", 101) + `"]`, `[` + strings.TrimSuffix(strings.Repeat(`"a",`, 1001), ",") + `]`, "[\"\xff\"]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		names, err := ParseLocal("application/json", strings.NewReader(body))
		if err != nil {
			requireBodyError(t, err)
			return
		}
		requireNames(t, names)
		var all []string
		if err := json.Unmarshal([]byte(body), &all); err != nil {
			t.Fatalf("%q: accepted, but encoding/json refuses it: %v", body, err)
		}
		var want []string
		for _, s := range all {
			if s = strings.TrimSpace(s); s != "" {
				want = append(want, s)
			}
		}
		if !slices.Equal(names, want) {
			t.Fatalf("%q: names %q, want %q", body, names, want)
		}
	})
}

func requireBodyError(t *testing.T, err error) {
	t.Helper()
	status := http.StatusBadRequest
	var be *bodyError
	if errors.As(err, &be) {
		status = be.status
	}
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge && status != http.StatusUnsupportedMediaType {
		t.Fatalf("refused with %d: %v", status, err)
	}
	if msg := err.Error(); msg == "" || !utf8.ValidString(msg) {
		t.Fatalf("refused without a readable message: %q", msg)
	}
}

func requireNames(t *testing.T, names []string) {
	t.Helper()
	if len(names) < 1 || len(names) > query.MaxLocalNames {
		t.Fatalf("%d names accepted", len(names))
	}
	for _, n := range names {
		if n == "" || n != strings.TrimSpace(n) || !utf8.ValidString(n) || utf8.RuneCountInString(n) > maxNameLength {
			t.Fatalf("name %q accepted", n)
		}
	}
}
