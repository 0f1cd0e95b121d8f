package api

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer/indexertest"
	"gds/indexer/nametable"
	"gds/query"
	"gds/snapshots"
	"gds/snapshots/synth"
)

// localFixture: two alliances, three corporations (one without an
// alliance), five pilots (one in factional warfare) and a system whose
// name is no pilot's.
func localFixture() indexertest.Records {
	return indexertest.Records{
		snapshots.Characters: {
			&snapshots.Character{Entity: named(90000001, "Alpha Pilot", nil), CorporationID: 98000001, AllianceID: 99000001},
			&snapshots.Character{Entity: named(90000002, "Beta Pilot", nil), CorporationID: 98000001, AllianceID: 99000001},
			&snapshots.Character{Entity: named(90000003, "Gamma Pilot", nil), CorporationID: 98000002, AllianceID: 99000001},
			&snapshots.Character{Entity: named(90000004, "Delta Pilot", nil), CorporationID: 98000003, AllianceID: 99000002, FactionID: 500001},
			&snapshots.Character{Entity: named(90000005, "Solo Pilot", nil), CorporationID: 98000004},
		},
		snapshots.Corporations: {
			&snapshots.Corporation{Entity: named(98000001, "Alpha Corp", nil), Ticker: "ALPHA", MemberCount: 2, AllianceID: 99000001},
			&snapshots.Corporation{Entity: named(98000002, "Gamma Corp", nil), Ticker: "GAMMA", MemberCount: 1, AllianceID: 99000001},
			&snapshots.Corporation{Entity: named(98000003, "Delta Corp", nil), Ticker: "DELTA", MemberCount: 1, AllianceID: 99000002},
			&snapshots.Corporation{Entity: named(98000004, "Solo Corp", nil), Ticker: "SOLO", MemberCount: 1},
		},
		snapshots.Alliances: {
			&snapshots.Alliance{Entity: named(99000001, "Alpha Alliance", nil), Ticker: "A-A"},
			&snapshots.Alliance{Entity: named(99000002, "Delta Alliance", nil), Ticker: "D-A"},
		},
		snapshots.SolarSystems: {
			&snapshots.SolarSystem{Entity: named(30000142, "Jita", nil), ConstellationID: 20000020, SecurityStatus: 0.9},
		},
	}
}

// localAll is the answer for every pilot of localFixture.
const localAll = `{
	"characters":[
		{"character_id":90000001,"name":"Alpha Pilot","corporation_id":98000001,"alliance_id":99000001},
		{"character_id":90000002,"name":"Beta Pilot","corporation_id":98000001,"alliance_id":99000001},
		{"character_id":90000004,"name":"Delta Pilot","corporation_id":98000003,"alliance_id":99000002,"faction_id":500001},
		{"character_id":90000003,"name":"Gamma Pilot","corporation_id":98000002,"alliance_id":99000001},
		{"character_id":90000005,"name":"Solo Pilot","corporation_id":98000004}],
	"corporations":[
		{"corporation_id":98000001,"name":"Alpha Corp","ticker":"ALPHA","alliance_id":99000001,"count":2},
		{"corporation_id":98000003,"name":"Delta Corp","ticker":"DELTA","alliance_id":99000002,"count":1},
		{"corporation_id":98000002,"name":"Gamma Corp","ticker":"GAMMA","alliance_id":99000001,"count":1},
		{"corporation_id":98000004,"name":"Solo Corp","ticker":"SOLO","count":1}],
	"alliances":[
		{"alliance_id":99000001,"name":"Alpha Alliance","ticker":"A-A","count":3},
		{"alliance_id":99000002,"name":"Delta Alliance","ticker":"D-A","count":1}],
	"unknown":["Jita","Nobody Here"]}`

func TestLocal(t *testing.T) {
	ts := newTestServer(t, localFixture(), released(false))
	sp := newSpecs(ts)
	lines := func(n int, name string) string {
		return strings.Repeat(name+"\n", n)
	}
	text := []string{"Content-Type", "text/plain; charset=utf-8"}
	js := []string{"Content-Type", "application/json"}
	for _, tc := range []struct {
		name, body string
		headers    []string
		status     int
		want       string
	}{
		{"chat list", "Alpha Pilot\nBeta Pilot\nGamma Pilot\nDelta Pilot\nSolo Pilot\nJita\nNobody Here\n", text, 200, localAll},
		{"spaces, blank lines, CRLF, case, repeats", "\uFEFF  alpha pilot \r\n\r\nBETA PILOT\n\tGamma Pilot\nDelta Pilot\nSolo Pilot\nJita\n" +
			"Nobody Here\nalpha pilot\nJita\n\n", text, 200, localAll},
		{"JSON array", `["Alpha Pilot","Beta Pilot","Gamma Pilot","Delta Pilot","Solo Pilot","Jita"," Nobody Here ",""]`, js, 200, localAll},
		{"array without a content type", `  ["Solo Pilot"]`, nil, 200, `{"characters":[{"character_id":90000005,"name":"Solo Pilot","corporation_id":98000004}],
			"corporations":[{"corporation_id":98000004,"name":"Solo Corp","ticker":"SOLO","count":1}],"alliances":[],"unknown":[]}`},
		{"nobody known", "Jita\n", text, 200, `{"characters":[],"corporations":[],"alliances":[],"unknown":["Jita"]}`},
		{"1,000 names", lines(1000, "Solo Pilot"), text, 200, `{"characters":[{"character_id":90000005,"name":"Solo Pilot","corporation_id":98000004}],
			"corporations":[{"corporation_id":98000004,"name":"Solo Corp","ticker":"SOLO","count":1}],"alliances":[],"unknown":[]}`},
		{"1,001 names", lines(1001, "Solo Pilot"), text, 400, "more than 1000 names"},
		{"1,001 names, blank lines between", strings.ReplaceAll(lines(1001, "x"), "\n", "\n\n"), text, 400, "more than 1000 names"},
		{"1,001 in JSON", "[" + strings.TrimSuffix(strings.Repeat(`"x",`, 1001), ",") + "]", js, 400, "1 to 1000"},
		{"101 characters", "Alpha Pilot\n" + strings.Repeat("é", 101) + "\n", text, 400, "line 2: a name of 101 characters, at most 100"},
		{"100 characters", strings.Repeat("é", 100), text, 200, `{"characters":[],"corporations":[],"alliances":[],"unknown":["` + strings.Repeat("é", 100) + `"]}`},
		{"101 characters in JSON", `["` + strings.Repeat("x", 101) + `"]`, js, 400, "body[0]: a name of 101 characters"},
		{"not UTF-8", "Alpha Pilot\nBeta\xffPilot\n", text, 400, "line 2: not valid UTF-8"},
		{"lone surrogate in JSON", `["Alpha Pilot","\ud800"]`, js, 400, "body[1]: must be valid UTF-8"},
		{"empty", "", text, 400, "no names"},
		{"only blank lines", "\n \n\t\n", text, 400, "no names"},
		{"only blank strings", `["", " "]`, js, 400, "no names"},
		{"not an array", `{"names":["Alpha Pilot"]}`, js, 400, "not a JSON array"},
		{"a number", `["Alpha Pilot", 5]`, js, 400, "body[1]: must be a string"},
		{"over the size limit", strings.Repeat("x", maxBodyBytes+1), text, 413, "larger than"},
		{"another media type", "Alpha Pilot", []string{"Content-Type", "image/png"}, 415, "image/png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := sp.do(t, http.MethodPost, "/v1/local/", tc.body, tc.headers...)
			requireAnswer(t, rec, tc.status, tc.want)
		})
	}
}

// TestLocalRoute: the route is gds's own, under every label, rate
// limited with the searches, and in both documents with its tag.
func TestLocalRoute(t *testing.T) {
	ts := newTestServer(t, localFixture())
	for _, prefix := range []string{"latest", "legacy", "dev", "v1"} {
		rec := ts.do(http.MethodPost, "/"+prefix+"/local/", strings.NewReader("Solo Pilot"), "Content-Type", "text/plain")
		if rec.Code != http.StatusOK {
			t.Errorf("/%s/local/: %d %s", prefix, rec.Code, rec.Body)
		}
		if got := rec.Header().Get("X-Ratelimit-Group"); got != RateGroupSearch {
			t.Errorf("/%s/local/: rate-limit group %q, want %q", prefix, got, RateGroupSearch)
		}
	}
	if rec := ts.do(http.MethodPost, "/v2/local/", strings.NewReader("Solo Pilot")); rec.Code != http.StatusNotFound {
		t.Errorf("/v2/local/: %d, want 404", rec.Code)
	}
	for _, doc := range []string{"/latest/openapi.json", "/latest/swagger.json"} {
		var spec struct {
			Paths map[string]map[string]struct {
				Tags        []string       `json:"tags"`
				OperationID string         `json:"operationId"`
				Consumes    []string       `json:"consumes"`
				RequestBody map[string]any `json:"requestBody"`
			} `json:"paths"`
		}
		decodeJSON(t, ts.do(http.MethodGet, doc, nil), &spec)
		op, ok := spec.Paths["/local/"]["post"]
		if !ok {
			t.Fatalf("%s: no POST /local/", doc)
		}
		if fmt.Sprint(op.Tags) != "[gds]" || op.OperationID != "post_local" {
			t.Errorf("%s: tags %v, operationId %q", doc, op.Tags, op.OperationID)
		}
		types := fmt.Sprint(op.Consumes)
		if op.RequestBody != nil {
			types = fmt.Sprint(op.RequestBody["content"])
		}
		if !strings.Contains(types, "text/plain") || !strings.Contains(types, "application/json") {
			t.Errorf("%s: body types %s, want text/plain and application/json", doc, types)
		}
	}
}

// localBench serves a generation of chars generated characters and
// returns n text bodies of 1,000 names drawn from those that are one
// character's (generated names repeat; the game's do not).
func localBench(tb testing.TB, chars int64, n int) (*testServer, []string) {
	tb.Helper()
	snap := indexertest.Generated(tb, synth.Config{Characters: chars, Corporations: chars / 50, Alliances: chars / 1000, Seed: 7})
	m := indexertest.Manager(tb, snap.Dir)
	ts := newTestServerWith(tb, Deps{Views: query.New(m), Logger: zerolog.New(io.Discard)}, func(d *Deps) {
		d.Limits.CacheBytes, d.Limits.RateLimitsOff = -1, true
	})
	ts.manager = m
	count := map[string]int{}
	var names []string
	err := snap.Each(snapshots.Characters, func(rec snapshots.Record, _ snapshots.Line) error {
		name := rec.(*snapshots.Character).Name
		count[nametable.Fold(name)]++
		names = append(names, name)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	names = slices.DeleteFunc(names, func(s string) bool { return count[nametable.Fold(s)] > 1 })
	rng := rand.New(rand.NewPCG(7, 37))
	bodies := make([]string, n)
	for i := range bodies {
		var sb strings.Builder
		for range query.MaxLocalNames {
			sb.WriteString(names[rng.IntN(len(names))])
			sb.WriteByte('\n')
		}
		bodies[i] = sb.String()
	}
	return ts, bodies
}
