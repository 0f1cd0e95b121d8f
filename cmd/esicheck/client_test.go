package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// esiclientLines are lines as esiclient prints them.
func esiclientLines(t *testing.T, rs ...clientResult) []byte {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	return []byte(b.String())
}

func TestClientReportAppliesExceptions(t *testing.T) {
	all := []call{
		{method: "get", template: "/characters/{character_id}/", path: "/characters/3008771/", note: "agent"},
		{method: "get", template: "/universe/types/{type_id}/", path: "/universe/types/587/"},
	}
	out := esiclientLines(t,
		clientResult{ID: 0, Operation: "GetCharactersDetail", Method: "GET", Template: "/characters/{character_id}", Status: 200,
			Findings: []string{`property "birthday" is missing (at /)`, `property "gender" is missing (at /)`}},
		clientResult{ID: 1, Operation: "GetUniverseTypesTypeId", Method: "GET", Template: "/universe/types/{type_id}", Status: 500,
			Findings: []string{"status 500, want 200"}},
		clientResult{ID: -1, Operation: "GetStatus", Method: "GET", Template: "/status", Skipped: "gds does not serve it"},
		clientResult{ID: -1, Operation: "GetUniverseFactions", Method: "GET", Template: "/universe/factions",
			Findings: []string{"gds serves it, but cmd/esicheck planned no call"}},
	)
	c := &checker{}
	failed, err := c.clientReport(out, all)
	if err != nil {
		t.Fatal(err)
	}
	// The agent's missing properties are excepted; the 500 and the
	// operation nobody called are not; the skipped one is no failure.
	if failed != 2 {
		t.Fatalf("failed = %d, want 2", failed)
	}
}

func TestClientReportRefusesOtherOutput(t *testing.T) {
	c := &checker{}
	if _, err := c.clientReport([]byte("panic: something\n"), nil); err == nil {
		t.Fatal("a line that is no JSON result was accepted")
	}
}

func TestOtherRoute(t *testing.T) {
	// gds's answer to GET /corporations/npccorps/: its corporation route
	// took the path.
	body := []byte(`{"error":"corporation_id: must be a positive integer up to 9007199254740992, got \"npccorps\"","status":400,` +
		`"details":[{"location":"path.corporation_id","message":"must be a positive integer","value":"npccorps"}]}`)
	if !otherRoute("/corporations/npccorps/", body) {
		t.Error("/corporations/npccorps/: a 400 about path.corporation_id is another route's")
	}
	if otherRoute("/corporations/{corporation_id}/", body) {
		t.Error("/corporations/{corporation_id}/: a 400 about its own path parameter is its own")
	}
	query := []byte(`{"error":"search: missing","status":400,"details":[{"location":"query.search","message":"missing"}]}`)
	if otherRoute("/characters/{character_id}/search/", query) {
		t.Error("a 400 about a query parameter is the route's own")
	}
}

func TestUnslash(t *testing.T) {
	for in, want := range map[string]string{
		"/characters/{character_id}/": "/characters/{character_id}",
		"/meta/status":                "/meta/status",
		"/":                           "/",
	} {
		if got := unslash(in); got != want {
			t.Errorf("unslash(%q) = %q, want %q", in, got, want)
		}
	}
}
