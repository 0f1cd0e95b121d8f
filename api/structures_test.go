package api

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

// The structures fixture: corporation A has three structures and two
// members (a Station_Manager and a member without the role); corporation B
// has one structure and its own Station_Manager.
const (
	corpA, corpB     = 98000001, 98000002
	managerA         = 90000001
	memberA          = 90000002
	managerB         = 90000003
	noRoles          = 90000004 // a character with no roles record at all
	structA1         = 1000000000001
	structA2         = 1000000000002
	structA3         = 1000000000003
	structB1         = 1000000000101
	readStructures   = scopeReadStructures
	writeStructures  = scopeWriteStructures
	structuresPathA  = "/corporations/98000001/structures/"
	putPathA1        = "/corporations/98000001/structures/1000000000001/"
	validWindowsBody = `[{"day":0,"hour":12},{"day":6,"hour":23}]`
)

func ptr[T any](v T) *T { return &v }

var fixtureTime = time.Date(2026, 6, 3, 18, 30, 0, 0, time.UTC)

func structureFixture() indexertest.Records {
	structure := func(id, corp int64, name string) *snapshots.Structure {
		return &snapshots.Structure{ID: id, Name: name, TypeID: 35832, CorporationID: corp, SystemID: 30000142,
			ProfileID: 7, State: "shield_vulnerable", ReinforceWeekday: 2, ReinforceHour: 19,
			CurrentVul: []snapshots.Window{{Day: 2, Hour: 19}}, NextVul: []snapshots.Window{{Day: 3, Hour: 20}}}
	}
	a1 := structure(structA1, corpA, "Jita - Alpha")
	a1.Services = []snapshots.Service{{Name: "Clone Bay", State: "online"}, {Name: "Market", State: "offline"}}
	a1.FuelExpires = ptr(fixtureTime.Add(240 * time.Hour))
	a2 := structure(structA2, corpA, "Jita - Beta")
	a2.State = "hull_vulnerable"
	a2.NextReinforceWeekday, a2.NextReinforceHour = ptr(4), ptr(3)
	a2.NextReinforceApply = ptr(fixtureTime.Add(7 * 24 * time.Hour))
	a3 := structure(structA3, corpA, "Jita - Gamma")
	a3.CurrentVul, a3.NextVul = nil, nil
	b1 := structure(structB1, corpB, "Amarr - Other")
	return indexertest.Records{
		snapshots.Structures: {a1, a2, a3, b1},
		snapshots.Roles: {
			&snapshots.CharacterRoles{CharacterID: managerA, CorporationID: corpA, Roles: []string{"Director", snapshots.RoleStationManager}},
			&snapshots.CharacterRoles{CharacterID: memberA, CorporationID: corpA, Roles: []string{"Accountant"}},
			&snapshots.CharacterRoles{CharacterID: managerB, CorporationID: corpB, Roles: []string{snapshots.RoleStationManager}},
		},
	}
}

// listed decodes a structures list answer into maps, one per structure.
func listed(t testing.TB, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("structures list %q: %v", body, err)
	}
	return out
}

func TestStructuresV2Shape(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	ts.clock.Set(testRelease.AddDate(0, 0, 1))
	sp := newSpecs(ts)
	rec := sp.do(t, http.MethodGet, "/v2"+structuresPathA, "", bearer(ts.token(managerA, readStructures))...)
	if rec.Code != http.StatusOK {
		t.Fatalf("v2 list: %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("X-Pages"); got != "1" {
		t.Errorf("X-Pages = %q, want 1", got)
	}
	want := `[
	 {"structure_id":1000000000001,"type_id":35832,"corporation_id":98000001,"system_id":30000142,"profile_id":7,
	  "state":"shield_vulnerable","reinforce_weekday":2,"reinforce_hour":19,
	  "services":[{"name":"Clone Bay","state":"online"},{"name":"Market","state":"offline"}],
	  "fuel_expires":"2026-06-13T18:30:00Z"},
	 {"structure_id":1000000000002,"type_id":35832,"corporation_id":98000001,"system_id":30000142,"profile_id":7,
	  "state":"hull_vulnerable","reinforce_weekday":2,"reinforce_hour":19,
	  "next_reinforce_weekday":4,"next_reinforce_hour":3,"next_reinforce_apply":"2026-06-10T18:30:00Z"},
	 {"structure_id":1000000000003,"type_id":35832,"corporation_id":98000001,"system_id":30000142,"profile_id":7,
	  "state":"shield_vulnerable","reinforce_weekday":2,"reinforce_hour":19}
	]`
	requireJSONEqual(t, rec.Body.Bytes(), want)
	if rec.Header().Get("Warning") != "" {
		t.Errorf("latest v2 carries Warning %q", rec.Header().Get("Warning"))
	}
}

func TestStructuresV1ShapeBeforeAndAfterRelease(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	sp := newSpecs(ts)
	tok := func() []string { return bearer(ts.token(managerA, readStructures)) }

	ts.clock.Set(testRelease.Add(-time.Minute))
	rec := sp.do(t, http.MethodGet, "/v1"+structuresPathA, "", tok()...)
	if rec.Code != http.StatusOK || rec.Header().Get("Warning") != "" {
		t.Fatalf("v1 before release: %d Warning %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	want := `[
	 {"structure_id":1000000000001,"type_id":35832,"corporation_id":98000001,"system_id":30000142,"profile_id":7,
	  "current_vul":[{"day":2,"hour":19}],"next_vul":[{"day":3,"hour":20}],
	  "services":[{"name":"Clone Bay","state":"online"},{"name":"Market","state":"offline"}],
	  "fuel_expires":"2026-06-13T18:30:00Z"},
	 {"structure_id":1000000000002,"type_id":35832,"corporation_id":98000001,"system_id":30000142,"profile_id":7,
	  "current_vul":[{"day":2,"hour":19}],"next_vul":[{"day":3,"hour":20}]},
	 {"structure_id":1000000000003,"type_id":35832,"corporation_id":98000001,"system_id":30000142,"profile_id":7,
	  "current_vul":[],"next_vul":[]}
	]`
	requireJSONEqual(t, rec.Body.Bytes(), want)

	for _, at := range []time.Time{testRelease, testRelease.AddDate(0, 0, 13), testRelease.AddDate(1, 0, 0)} {
		ts.clock.Set(at)
		rec := sp.do(t, http.MethodGet, "/v1"+structuresPathA, "", tok()...)
		if rec.Code != http.StatusOK || rec.Header().Get("Warning") != WarningDeprecated {
			t.Fatalf("v1 at %s: %d Warning %q", at, rec.Code, rec.Header().Get("Warning"))
		}
		for _, st := range listed(t, rec.Body.Bytes()) {
			for _, f := range []string{"current_vul", "next_vul"} {
				if l, ok := st[f].([]any); !ok || len(l) != 0 {
					t.Errorf("v1 at %s: %s = %v, want []", at, f, st[f])
				}
			}
			if _, ok := st["state"]; ok {
				t.Errorf("v1 at %s carries state", at)
			}
		}
	}
}

// TestStructuresAccess runs over a real generation and over records in
// memory (the read seam): the same answers from both.
func TestStructuresAccess(t *testing.T) {
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			ts := backend(t, structureFixture(), released(false))
			ts.clock.Set(testRelease.AddDate(0, 1, 0))
			sp := newSpecs(ts)
			for _, tc := range []struct {
				name    string
				path    string
				headers []string
				status  int
				msg     string
			}{
				{"manager of the corporation", structuresPathA, bearer(ts.token(managerA, readStructures)), 200, ""},
				{"no token", structuresPathA, nil, 401, ""},
				{"garbage token", structuresPathA, bearer("not.a.token"), 401, ""},
				{"expired token", structuresPathA, bearer(ts.mint(authMint(managerA, ts.clock.Now().Add(-2*time.Hour), readStructures))), 401, ""},
				{"missing scope", structuresPathA, bearer(ts.token(managerA, "esi-search.search_structures.v1")), 403, readStructures},
				{"member without the role", structuresPathA, bearer(ts.token(memberA, readStructures)), 403, msgNoRole},
				{"no roles at all", structuresPathA, bearer(ts.token(noRoles, readStructures)), 403, msgNoRole},
				{"manager of another corporation", structuresPathA, bearer(ts.token(managerB, readStructures)), 403, msgNoRole},
				{"manager of B reads B", "/corporations/98000002/structures/", bearer(ts.token(managerB, readStructures)), 200, ""},
				{"unknown corporation", "/corporations/98000999/structures/", bearer(ts.token(managerA, readStructures)), 403, msgNoRole},
				{"malformed corporation", "/corporations/abc/structures/", bearer(ts.token(managerA, readStructures)), 400, "corporation_id"},
				{"zero corporation", "/corporations/0/structures/", bearer(ts.token(managerA, readStructures)), 400, "corporation_id"},
				{"bad page", structuresPathA + "?page=0", bearer(ts.token(managerA, readStructures)), 400, "page"},
				{"page beyond the last", structuresPathA + "?page=2", bearer(ts.token(managerA, readStructures)), 404, msgNoSuchPage},
			} {
				for _, prefix := range []string{"/v1", "/v2", "/latest", "/legacy"} {
					rec := sp.do(t, http.MethodGet, prefix+tc.path, "", tc.headers...)
					if rec.Code != tc.status {
						t.Errorf("%s %s: %d %s, want %d", tc.name, prefix, rec.Code, rec.Body, tc.status)
						continue
					}
					if tc.msg != "" && !strings.Contains(errorOf(t, rec), tc.msg) {
						t.Errorf("%s %s: error %q, want it to mention %q", tc.name, prefix, errorOf(t, rec), tc.msg)
					}
				}
			}
		})
	}
}

// TestStructuresNeverLeak: random characters with random roles in random
// corporations ask for random corporations' structures. Only a
// Station_Manager (or Director) of that very corporation gets an answer, and the answer
// holds exactly that corporation's structures.
func TestStructuresNeverLeak(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const corps, chars, structs = 6, 40, 60
	roleNames := []string{snapshots.RoleStationManager, "Director", "Accountant", "Station_Manager_Lite"}
	owned := map[int64][]int64{}
	var structures, roles []snapshots.Record
	for i := range structs {
		corp := int64(98100000 + rng.IntN(corps))
		id := int64(1020000000000 + i)
		owned[corp] = append(owned[corp], id)
		structures = append(structures, &snapshots.Structure{ID: id, Name: fmt.Sprintf("S%d", i), TypeID: 35832,
			CorporationID: corp, SystemID: 30000142, State: "shield_vulnerable",
			Access: []int64{int64(91000000 + rng.IntN(chars))}})
	}
	type member struct {
		corp    int64
		manager bool
	}
	members := map[int64]member{}
	for i := range chars {
		id := int64(91000000 + i)
		if rng.IntN(5) == 0 {
			continue // no roles record
		}
		corp := int64(98100000 + rng.IntN(corps))
		var rs []string
		for _, r := range roleNames {
			if rng.IntN(2) == 0 {
				rs = append(rs, r)
			}
		}
		// A Director holds every role, Station_Manager included.
		members[id] = member{corp: corp, manager: slices.Contains(rs, snapshots.RoleStationManager) || slices.Contains(rs, RoleDirector)}
		roles = append(roles, &snapshots.CharacterRoles{CharacterID: id, CorporationID: corp, Roles: rs})
	}
	ts := newTestServer(t, indexertest.Records{snapshots.Structures: structures, snapshots.Roles: roles},
		released(false))
	ts.clock.Set(testRelease.AddDate(0, 0, 20))
	sp := newSpecs(ts)
	allowedSeen := 0
	for range 200 {
		char := int64(91000000 + rng.IntN(chars))
		corp := int64(98100000 + rng.IntN(corps+1)) // one corporation without structures
		prefix := []string{"/v1", "/v2"}[rng.IntN(2)]
		rec := sp.do(t, http.MethodGet, fmt.Sprintf("%s/corporations/%d/structures/", prefix, corp), "",
			bearer(ts.token(char, readStructures))...)
		m, ok := members[char]
		allowed := ok && m.corp == corp && m.manager
		if !allowed {
			if rec.Code != http.StatusForbidden {
				t.Fatalf("character %d (%+v) read corporation %d: %d %s, want 403", char, m, corp, rec.Code, rec.Body)
			}
			continue
		}
		allowedSeen++
		if rec.Code != http.StatusOK {
			t.Fatalf("manager %d of %d: %d %s", char, corp, rec.Code, rec.Body)
		}
		var got []int64
		for _, st := range listed(t, rec.Body.Bytes()) {
			if int64(st["corporation_id"].(float64)) != corp {
				t.Fatalf("corporation %d's list holds %v", corp, st)
			}
			got = append(got, int64(st["structure_id"].(float64)))
		}
		if !slices.Equal(got, owned[corp]) && !(len(got) == 0 && len(owned[corp]) == 0) {
			t.Fatalf("corporation %d: got %v, want %v", corp, got, owned[corp])
		}
	}
	if allowedSeen == 0 {
		t.Fatal("the random draw never hit a Station_Manager of the asked corporation; change the seed")
	}
}

func TestStructuresPaging(t *testing.T) {
	const n = 2*structuresPerPage + 17
	var recs []snapshots.Record
	for i := range n {
		recs = append(recs, &snapshots.Structure{ID: int64(1030000000000 + i), Name: "S" + strconv.Itoa(i),
			TypeID: 35832, CorporationID: corpA, SystemID: 30000142, State: "shield_vulnerable"})
	}
	recs = append(recs, &snapshots.Structure{ID: 1040000000000, Name: "other", TypeID: 35832,
		CorporationID: corpB, SystemID: 30000142, State: "shield_vulnerable"})
	ts := newTestServer(t, indexertest.Records{snapshots.Structures: recs, snapshots.Roles: structureFixture()[snapshots.Roles]},
		released(false))
	sp := newSpecs(ts)
	tok := bearer(ts.token(managerA, readStructures))
	var all []int64
	for _, tc := range []struct {
		query  string
		status int
		count  int
	}{
		{"", 200, structuresPerPage},
		{"?page=2", 200, structuresPerPage},
		{"?page=3", 200, 17},
		{"?page=4", 404, 0},
		{"?page=99999", 404, 0},
		{"?page=x", 400, 0},
		{"?page=-1", 400, 0},
	} {
		rec := sp.do(t, http.MethodGet, "/latest"+structuresPathA+tc.query, "", tok...)
		if rec.Code != tc.status {
			t.Fatalf("page %q: %d %s, want %d", tc.query, rec.Code, rec.Body, tc.status)
		}
		if tc.status == 404 {
			if got := errorOf(t, rec); got != msgNoSuchPage {
				t.Errorf("page %q: error %q, want %q", tc.query, got, msgNoSuchPage)
			}
		}
		if tc.status != 200 {
			continue
		}
		if got := rec.Header().Get("X-Pages"); got != "3" {
			t.Errorf("page %q: X-Pages %q, want 3", tc.query, got)
		}
		list := listed(t, rec.Body.Bytes())
		if len(list) != tc.count {
			t.Errorf("page %q: %d structures, want %d", tc.query, len(list), tc.count)
		}
		if tc.query != "" {
			for _, st := range list {
				all = append(all, int64(st["structure_id"].(float64)))
			}
		}
	}
	// Page 1 again, then 2 and 3 collected above: together every structure
	// of A once, in ascending ID order.
	rec := sp.do(t, http.MethodGet, "/latest"+structuresPathA+"?page=1", "", tok...)
	var first []int64
	for _, st := range listed(t, rec.Body.Bytes()) {
		first = append(first, int64(st["structure_id"].(float64)))
	}
	all = append(first, all...)
	if len(all) != n || !slices.IsSorted(all) || slices.Compact(slices.Clone(all))[n-1] != all[n-1] {
		t.Errorf("pages together hold %d structures (sorted %v), want %d distinct ascending", len(all), slices.IsSorted(all), n)
	}

	// A corporation without structures has one empty page.
	ts2 := newTestServer(t, indexertest.Records{snapshots.Roles: structureFixture()[snapshots.Roles]},
		released(false))
	rec = newSpecs(ts2).do(t, http.MethodGet, "/latest"+structuresPathA, "", bearer(ts2.token(managerA, readStructures))...)
	if rec.Code != 200 || rec.Body.String() != "[]" || rec.Header().Get("X-Pages") != "1" {
		t.Errorf("empty corporation: %d %s X-Pages %q, want 200 [] and 1", rec.Code, rec.Body, rec.Header().Get("X-Pages"))
	}
}

func TestPutBodyValidation(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	ts.clock.Set(testRelease.AddDate(0, 0, -1)) // v1 PUT is latest: it checks everything
	sp := newSpecs(ts)
	many := func(n int) string {
		return jsonList(n, func(i int) string { return fmt.Sprintf(`{"day":%d,"hour":%d}`, (i/24)%7, i%24) })
	}
	tok := bearer(ts.token(managerA, writeStructures))
	for _, tc := range []struct {
		name, path, body string
		headers          []string
		status           int
		msg              string
	}{
		{"valid", putPathA1, validWindowsBody, tok, 204, ""},
		{"168 windows", putPathA1, many(168), tok, 204, ""},
		{"169 windows", putPathA1, many(169), tok, 400, "1 to 168"},
		{"empty list", putPathA1, `[]`, tok, 400, "1 to 168"},
		{"no body", putPathA1, ``, tok, 400, "missing"},
		{"not JSON", putPathA1, `{day`, tok, 400, "not a JSON array"},
		{"object not array", putPathA1, `{"day":1,"hour":1}`, tok, 400, "not a JSON array"},
		{"day too big", putPathA1, `[{"day":0,"hour":1},{"day":7,"hour":1}]`, tok, 400, "body[1].day"},
		{"negative hour", putPathA1, `[{"day":0,"hour":-1}]`, tok, 400, "body[0].hour"},
		{"hour 24", putPathA1, `[{"day":0,"hour":24}]`, tok, 400, "body[0].hour"},
		{"missing hour", putPathA1, `[{"day":3}]`, tok, 400, "body[0].hour: missing"},
		{"missing day", putPathA1, `[{"hour":3}]`, tok, 400, "body[0].day: missing"},
		{"string day", putPathA1, `[{"day":"1","hour":3}]`, tok, 400, "body[0]"},
		{"fractional hour", putPathA1, `[{"day":1,"hour":3.5}]`, tok, 400, "body[0]"},
		{"unknown field", putPathA1, `[{"day":1,"hour":3,"minute":5}]`, tok, 400, "minute"},
		{"no token", putPathA1, validWindowsBody, nil, 401, ""},
		{"read scope only", putPathA1, validWindowsBody, bearer(ts.token(managerA, readStructures)), 403, writeStructures},
		{"not a manager", putPathA1, validWindowsBody, bearer(ts.token(memberA, writeStructures)), 403, msgNoRole},
		{"another corporation's manager", putPathA1, validWindowsBody, bearer(ts.token(managerB, writeStructures)), 403, msgNoRole},
		{"structure of another corporation", "/corporations/98000001/structures/1000000000101/", validWindowsBody, tok, 404, msgNoStructure},
		{"unknown structure", "/corporations/98000001/structures/1000000009999/", validWindowsBody, tok, 404, msgNoStructure},
		{"malformed structure", "/corporations/98000001/structures/x1/", validWindowsBody, tok, 400, "structure_id"},
	} {
		for _, prefix := range []string{"/v1", "/latest"} {
			rec := sp.do(t, http.MethodPut, prefix+tc.path, tc.body, tc.headers...)
			if rec.Code != tc.status {
				t.Errorf("%s %s: %d %s, want %d", tc.name, prefix, rec.Code, rec.Body, tc.status)
				continue
			}
			if tc.msg != "" && !strings.Contains(errorOf(t, rec), tc.msg) {
				t.Errorf("%s %s: error %q, want it to mention %q", tc.name, prefix, errorOf(t, rec), tc.msg)
			}
			if tc.status == 204 && rec.Body.Len() != 0 {
				t.Errorf("%s %s: 204 with body %q", tc.name, prefix, rec.Body)
			}
		}
	}
}

func TestParseWindowsAcceptsEveryHourOfTheWeek(t *testing.T) {
	week := jsonList(7*24, func(i int) string { return fmt.Sprintf(`{"hour":%d,"day":%d}`, i%24, i/24) })
	ws, err := parseWindows(strings.NewReader(week))
	if err != nil || len(ws) != maxWindows || ws[maxWindows-1] != (snapshots.Window{Day: 6, Hour: 23}) {
		t.Fatalf("parseWindows: %d windows, last %v, err %v", len(ws), ws[len(ws)-1], err)
	}
}

func FuzzParseWindows(f *testing.F) {
	for _, s := range []string{validWindowsBody, `[]`, `[{"day":7,"hour":0}]`, `{`, `[{"day":1}]`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		ws, err := parseWindows(strings.NewReader(body))
		if err != nil {
			return
		}
		if len(ws) < 1 || len(ws) > maxWindows {
			t.Fatalf("accepted %d windows", len(ws))
		}
		for _, w := range ws {
			if w.Validate() != nil {
				t.Fatalf("accepted invalid window %v", w)
			}
		}
	})
}

// requireJSONEqual compares two JSON texts by value.
func requireJSONEqual(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", gb, wb)
	}
}

// TestStructuresCaching: the list is private, revalidates with 304, and
// the v1 validator changes at the release although the data does not.
func TestStructuresCaching(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	sp := newSpecs(ts)
	ts.clock.Set(testRelease.Add(-time.Hour))
	rec := sp.do(t, http.MethodGet, "/v1"+structuresPathA, "", bearer(ts.token(managerA, readStructures))...)
	before := rec.Header().Get("ETag")
	if before == "" || !strings.Contains(rec.Header().Get("Cache-Control"), "private") {
		t.Fatalf("cache headers: %v", rec.Header())
	}
	rec = sp.do(t, http.MethodGet, "/v1"+structuresPathA, "", append(bearer(ts.token(managerA, readStructures)), "If-None-Match", before)...)
	if rec.Code != http.StatusNotModified {
		t.Errorf("current ETag: %d, want 304", rec.Code)
	}
	if rec := sp.do(t, http.MethodGet, "/v1"+structuresPathA, "", "If-None-Match", before); rec.Code != http.StatusUnauthorized {
		t.Errorf("current ETag without a token: %d, want 401", rec.Code)
	}
	ts.clock.Set(testRelease)
	rec = sp.do(t, http.MethodGet, "/v1"+structuresPathA, "", append(bearer(ts.token(managerA, readStructures)), "If-None-Match", before)...)
	if rec.Code != http.StatusOK || shapeOf(t, rec.Body.Bytes()) != shapeV1Empty {
		t.Errorf("after the release with the old ETag: %d, want 200 with empty windows", rec.Code)
	}
}
