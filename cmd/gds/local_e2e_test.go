package main

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gds/query"
	"gds/snapshots"
)

// TestLocalEndToEnd posts locals to the real binary serving the sample
// over HTTP: the answer's groups are the sample's own count, both body
// forms give the same, bad bodies get ESI errors with the right status,
// and the page's form at /local renders the breakdown.
func TestLocalEndToEnd(t *testing.T) {
	needsBinary(t)
	// A local: the first 60 characters of the sample, in upper case.
	snap, err := snapshots.Open(sampleSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	type affil struct{ corp, alliance int64 }
	var names []string
	want := map[string]affil{}
	err = snap.Each(snapshots.Characters, func(r snapshots.Record, _ snapshots.Line) error {
		if c := r.(*snapshots.Character); len(names) < 60 {
			names = append(names, strings.ToUpper(c.Name))
			want[c.Name] = affil{c.CorporationID, c.AllianceID}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	corps, alliances := map[int64]int{}, map[int64]int{}
	for _, a := range want {
		corps[a.corp]++
		if a.alliance != 0 {
			alliances[a.alliance]++
		}
	}

	srv := serveBinary(t, t.TempDir(), "--snapshot", sampleSnapshot)
	addr, client := srv.public, srv.client
	post := func(path, ctype, body string) (int, []byte) {
		t.Helper()
		resp, err := client.Post("http://"+addr+path, ctype, strings.NewReader(body))
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	text := "\n" + strings.Join(names, " \r\n") + "\nNobody At All\n\n"
	jsonBody, _ := json.Marshal(append(names, "Nobody At All"))
	var answers []string
	for _, body := range []struct{ ctype, body string }{{"text/plain", text}, {"application/json", string(jsonBody)}} {
		status, raw := post("/latest/local/", body.ctype, body.body)
		var got query.Local
		if status != http.StatusOK || json.Unmarshal(raw, &got) != nil {
			t.Fatalf("%s: %d %s", body.ctype, status, raw)
		}
		answers = append(answers, string(raw))
		if len(got.Characters) != len(want) || strings.Join(got.Unknown, ",") != "Nobody At All" {
			t.Errorf("%s: %d characters, unknown %q; want %d and Nobody At All", body.ctype, len(got.Characters), got.Unknown, len(want))
		}
		for _, c := range got.Characters {
			if a, ok := want[c.Name]; !ok || a.corp != c.CorporationID || a.alliance != c.AllianceID {
				t.Errorf("%s: %+v, the sample says %+v", body.ctype, c, a)
			}
		}
		if len(got.Corporations) != len(corps) || len(got.Alliances) != len(alliances) {
			t.Errorf("%s: %d corporations and %d alliances, the sample %d and %d", body.ctype, len(got.Corporations), len(got.Alliances), len(corps), len(alliances))
		}
		for i, c := range got.Corporations {
			if corps[c.CorporationID] != c.Count || i > 0 && c.Count > got.Corporations[i-1].Count {
				t.Errorf("%s: corporation %d counted %d, the sample %d (or out of order)", body.ctype, c.CorporationID, c.Count, corps[c.CorporationID])
			}
		}
		for _, a := range got.Alliances {
			if alliances[a.AllianceID] != a.Count {
				t.Errorf("%s: alliance %d counted %d, the sample %d", body.ctype, a.AllianceID, a.Count, alliances[a.AllianceID])
			}
		}
	}
	if answers[0] != answers[1] {
		t.Errorf("text and JSON bodies answered differently:\n%s\n%s", answers[0], answers[1])
	}

	for _, tc := range []struct {
		name, ctype, body string
		status            int
		want              string
	}{
		{"1,001 names", "text/plain", strings.Repeat("Some Pilot\n", 1001), 400, "more than 1000 names"},
		{"a long name", "text/plain", strings.Repeat("x", 101), 400, "line 1: a name of 101 characters"},
		{"not UTF-8", "text/plain", "a\n\xc3\x28", 400, "line 2: not valid UTF-8"},
		{"over the body limit", "text/plain", strings.Repeat("x\n", 40_000), 413, "larger than 65536 bytes"},
		{"another media type", "application/xml", "<a/>", 415, "application/xml"},
	} {
		status, raw := post("/latest/local/", tc.ctype, tc.body)
		var e struct{ Error string }
		if status != tc.status || json.Unmarshal(raw, &e) != nil || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: %d %.200s, want %d and %q", tc.name, status, raw, tc.status, tc.want)
		}
	}

	// The page: /local posted as a form renders the same pilots.
	status, raw := post("/local", "application/x-www-form-urlencoded", url.Values{"names": {text}}.Encode())
	page := string(raw)
	if status != http.StatusOK || !strings.Contains(page, `data-kind="characters"`) || !strings.Contains(page, "<li>Nobody At All</li>") {
		t.Fatalf("POST /local: %d %.500s", status, page)
	}
	for name := range want {
		if !strings.Contains(page, ">"+html.EscapeString(name)+"<small") {
			t.Errorf("the page lacks pilot %q", name)
		}
	}
}
