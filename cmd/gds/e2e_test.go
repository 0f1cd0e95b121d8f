package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"gds/api/apitest"
	"gds/snapshots"
)

// The end-to-end test builds the real gds binary, serves the committed
// sample snapshot on loopback, mints tokens with `gds token` and talks HTTP
// to it, as a user following the README would.

const sampleSnapshot = "../../snapshots/sample"

// buildBinary returns the gds binary, built once for the package's tests.
func buildBinary(t *testing.T) string { return faultBinary(t) }

// sampleFacts are what the test expects, read from the sample itself.
type sampleFacts struct {
	jitaID        int64
	manager       int64 // a Station_Manager of corp
	corp          int64
	corpStructure int64
	accessible    *snapshots.Structure // a structure manager may access
	outsider      int64                // a character without the role in corp
}

func readSample(t *testing.T) sampleFacts {
	t.Helper()
	snap, err := snapshots.Open(sampleSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	var f sampleFacts
	each := func(k snapshots.Kind, fn func(snapshots.Record)) {
		if err := snap.Each(k, func(r snapshots.Record, _ snapshots.Line) error { fn(r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	each(snapshots.SolarSystems, func(r snapshots.Record) {
		if s := r.(*snapshots.SolarSystem); s.Name == "Jita" {
			f.jitaID = s.ID
		}
	})
	byCorp := map[int64][]*snapshots.Structure{}
	var structures []*snapshots.Structure
	each(snapshots.Structures, func(r snapshots.Record) {
		s := r.(*snapshots.Structure)
		byCorp[s.CorporationID] = append(byCorp[s.CorporationID], s)
		structures = append(structures, s)
	})
	each(snapshots.Roles, func(r snapshots.Record) {
		cr := r.(*snapshots.CharacterRoles)
		if !cr.Has(snapshots.RoleStationManager) {
			if f.outsider == 0 {
				f.outsider = cr.CharacterID
			}
			return
		}
		if f.accessible != nil || len(byCorp[cr.CorporationID]) == 0 {
			return
		}
		for _, s := range structures {
			if slices.Contains(s.Access, cr.CharacterID) && len([]rune(s.Name)) >= 3 {
				f.manager, f.corp, f.accessible = cr.CharacterID, cr.CorporationID, s
				f.corpStructure = byCorp[cr.CorporationID][0].ID
				return
			}
		}
	})
	if f.jitaID == 0 || f.accessible == nil || f.outsider == 0 {
		t.Fatalf("the sample lacks what the test needs: %+v", f)
	}
	return f
}

func TestEndToEnd(t *testing.T) {
	needsBinary(t)
	facts := readSample(t)
	bin := buildBinary(t)
	data := t.TempDir()
	srv := startServeBinary(t, "--snapshot", sampleSnapshot, "--data", data)
	addr, client := srv.public, srv.client

	get := func(path, token string) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return exchange(t, client, req)
	}
	mint := func(character int64, scopes ...string) string {
		t.Helper()
		return mintToken(t, bin, data, character, scopes)
	}

	// Public search.
	status, hdr, body := get("/latest/search/?search=jita&categories=solar_system,inventory_type&strict=false", "")
	var result map[string][]int64
	if status != http.StatusOK || json.Unmarshal(body, &result) != nil || !slices.Contains(result["solar_system"], facts.jitaID) {
		t.Fatalf("public search: %d %s", status, body)
	}
	if !strings.Contains(hdr.Get("Cache-Control"), "public") || hdr.Get("ETag") == "" {
		t.Errorf("public search cache headers: %v", hdr)
	}
	if status, _, body := get("/latest/search/?search=ji&categories=solar_system", ""); status != http.StatusBadRequest || !strings.Contains(string(body), `"error"`) {
		t.Errorf("short search: %d %s", status, body)
	}

	// Character search with the structure category, token from gds token.
	token := mint(facts.manager, "esi-search.search_structures.v1", "esi-corporations.read_structures.v1")
	text := url.QueryEscape(string([]rune(facts.accessible.Name)[:min(8, len([]rune(facts.accessible.Name)))]))
	path := fmt.Sprintf("/latest/characters/%d/search/?search=%s&categories=structure", facts.manager, text)
	status, _, body = get(path, token)
	result = nil
	if status != http.StatusOK || json.Unmarshal(body, &result) != nil || !slices.Contains(result["structure"], facts.accessible.ID) {
		t.Fatalf("character search %s: %d %s", path, status, body)
	}
	if status, _, _ := get(path, ""); status != http.StatusUnauthorized {
		t.Errorf("character search without token: %d, want 401", status)
	}
	other := mint(facts.outsider, "esi-search.search_structures.v1")
	if status, _, _ := get(path, other); status != http.StatusForbidden {
		t.Errorf("character search with another character's token: %d, want 403", status)
	}

	// Corporation structures with a Station_Manager's token.
	status, _, body = get(fmt.Sprintf("/latest/corporations/%d/structures/", facts.corp), token)
	var list []map[string]any
	if status != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list) == 0 {
		t.Fatalf("structures list: %d %s", status, body)
	}
	for _, s := range list {
		if int64(s["corporation_id"].(float64)) != facts.corp {
			t.Fatalf("structure of another corporation listed: %v", s)
		}
	}
	if status, _, _ := get(fmt.Sprintf("/latest/corporations/%d/structures/", facts.corp), mint(facts.outsider, "esi-corporations.read_structures.v1")); status != http.StatusForbidden {
		t.Errorf("structures list without the role: %d, want 403", status)
	}

	// Graceful shutdown on SIGTERM.
	srv.stop(t)
}

// freeAddr picks a free loopback port for a program that cannot report the
// one it bound; gds itself binds 127.0.0.1:0 and logs its address (see
// waitListening).
var freeAddr = apitest.FreeAddr
