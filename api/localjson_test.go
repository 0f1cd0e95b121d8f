package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"gds/query"
)

// hostileNames are names with every byte and character json.Marshal
// escapes: quotes, backslashes, control characters, the HTML characters,
// U+2028 and U+2029, invalid UTF-8 and a lone surrogate's encoding.
var hostileNames = []string{"", "Alpha Pilot", `say "hi"`, `back\slash`, "\x00\x01\x08\x0c\n\r\t\x1f\x7f", "<b>&amp;</b>",
	"line\u2028para\u2029", "bad\xffbyte", "\xed\xa0\x80", "é ß 漢字 🚀", "trail\xe2\x80", "\u2027\u202a"}

// TestAppendLocalIsEncodingJSON: the local encoder writes what
// json.Marshal writes for the same answer, nil lists included.
func TestAppendLocalIsEncodingJSON(t *testing.T) {
	full := query.Local{Unknown: hostileNames}
	for i, name := range hostileNames {
		id := int64(90000000 + i)
		full.Characters = append(full.Characters, query.LocalCharacter{CharacterID: id, Name: name, CorporationID: 98000000 + id%3,
			AllianceID: id % 2 * 99000001, FactionID: id % 3 * 500001})
		full.Corporations = append(full.Corporations, query.LocalCorporation{CorporationID: -id, Name: name, Ticker: name,
			AllianceID: id % 2 * 99000001, Count: i})
		full.Alliances = append(full.Alliances, query.LocalAlliance{AllianceID: id, Name: name, Ticker: name, Count: -i})
	}
	empty := query.Local{Characters: []query.LocalCharacter{}, Corporations: []query.LocalCorporation{},
		Alliances: []query.LocalAlliance{}, Unknown: []string{}}
	for _, l := range []query.Local{full, empty, {}} {
		requireEncodingJSON(t, l)
	}
}

// FuzzAppendJSONString: any string is written as json.Marshal writes it.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range hostileNames {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("%q: %s, want %s", s, got[1:], want)
		}
	})
}

// TestLocalAnswerIsEncodingJSON: over a generated generation, the route
// answers each body with json.Marshal's encoding of the View's local for
// the body's names.
func TestLocalAnswerIsEncodingJSON(t *testing.T) {
	ts, bodies := localBench(t, 20_000, 4)
	var valid []string // a text body is UTF-8
	for _, name := range hostileNames {
		if utf8.ValidString(name) {
			valid = append(valid, name)
		}
	}
	bodies = append(bodies, strings.Join(valid, "\n")+"\nAlpha Pilot\n")
	v, err := ts.deps.Views.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for i, body := range bodies {
		names, err := ParseLocal("text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		l, err := v.Local(names)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/latest/local/", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		rec := httptest.NewRecorder()
		ts.h.ServeHTTP(rec, req)
		if got, _ := io.ReadAll(rec.Body); rec.Code != http.StatusOK || !bytes.Equal(got, want) {
			t.Fatalf("body %d: %d\n%.300s\nwant\n%.300s", i, rec.Code, got, want)
		}
	}
}

func requireEncodingJSON(t *testing.T, l query.Local) {
	t.Helper()
	want, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendLocal(nil, l); !bytes.Equal(got, want) {
		t.Fatalf("appendLocal:\n%s\nwant\n%s", got, want)
	}
}
