package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

// documentIDs fill the path parameters of the document routes in the tests.
var documentIDs = map[string]string{
	"character_id": "90000001", "corporation_id": "98000001", "alliance_id": "99000001",
	"contract_id": "5", "observer_id": "6", "starbase_id": "7", "division": "1",
}

// concrete fills template with documentIDs, and with other where given.
func concrete(template string, other map[string]string) string {
	out := template
	for _, name := range pathParams(template) {
		v := documentIDs[name]
		if o, ok := other[name]; ok {
			v = o
		}
		out = strings.Replace(out, "{"+name+"}", v, 1)
	}
	return out
}

// documentFixture stores one document per document route, for documentIDs,
// whose body names its path.
func documentFixture() indexertest.Records {
	var docs []snapshots.Record
	for i, d := range documentTable {
		p := concrete(d.path, nil)
		docs = append(docs, &snapshots.Document{Seq: int64(i + 1), Path: p,
			Body: json.RawMessage(fmt.Sprintf(`[{"path":%q,"n":%d}]`, p, i))})
	}
	// The owner of documentIDs: a Director of the corporation, in the
	// alliance; 90000009 is in another corporation and alliance.
	return indexertest.Records{
		snapshots.Documents: docs,
		snapshots.Characters: {
			&snapshots.Character{Entity: indexertest.Named(90000001, "Owner"), CorporationID: 98000001, AllianceID: 99000001},
			&snapshots.Character{Entity: indexertest.Named(90000002, "Other Owner"), CorporationID: 98000001, AllianceID: 99000001},
			&snapshots.Character{Entity: indexertest.Named(90000009, "Outsider"), CorporationID: 98000002, AllianceID: 99000002},
			&snapshots.Character{Entity: indexertest.Named(90000003, "Owner Elsewhere"), CorporationID: 98000003, AllianceID: 99000003},
		},
		snapshots.Roles: {
			&snapshots.CharacterRoles{CharacterID: 90000001, CorporationID: 98000001, Roles: []string{RoleDirector}},
			&snapshots.CharacterRoles{CharacterID: 90000009, CorporationID: 98000002, Roles: []string{RoleDirector}},
			&snapshots.CharacterRoles{CharacterID: 90000003, CorporationID: 98000003, Roles: []string{RoleDirector}},
		},
	}
}

func TestDocumentRoutes(t *testing.T) {
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			// Every document route from one client: more 4xx than a group's budget.
			ts := backend(t, documentFixture(), released(false), func(d *Deps) { d.Limits.RateLimitsOff = true })
			sp := newSpecs(ts)
			const owner, other = 90000001, 90000009
			for i, d := range documentTable {
				t.Run(d.method+" "+d.path, func(t *testing.T) {
					body := ""
					if d.method == http.MethodPost {
						body = `[1000000016991, 1000000016992]`
					}
					path := concrete(d.path, nil)
					call := func(prefix, p string, headers ...string) (int, string) {
						rec := sp.do(t, d.method, prefix+p, body, headers...)
						return rec.Code, rec.Body.String()
					}
					good := bearer(ts.token(owner, d.scope))
					for _, prefix := range []string{fmt.Sprintf("/v%d", d.version), "/latest"} {
						code, got := call(prefix, path, good...)
						if code != 200 {
							t.Fatalf("%s%s: %d %s", prefix, path, code, got)
						}
						requireJSONEqual(t, []byte(got), fmt.Sprintf(`[{"path":%q,"n":%d}]`, path, i))
					}
					if code, _ := call(fmt.Sprintf("/v%d", d.version+1), path, good...); code != 404 {
						t.Errorf("a version the route lacks answered %d, want 404", code)
					}
					if code, got := call("/latest", path); code != 401 {
						t.Errorf("no token: %d %s, want 401", code, got)
					}
					if code, got := call("/latest", path, bearer(ts.token(owner, "esi-search.search_structures.v1"))...); code != 403 ||
						!strings.Contains(got, d.scope) {
						t.Errorf("token without %s: %d %s, want 403 naming the scope", d.scope, code, got)
					}
					code, got := call("/latest", path, bearer(ts.token(other, d.scope))...)
					if characterRoute(d.path) {
						if code != 403 {
							t.Errorf("another character's token: %d %s, want 403", code, got)
						}
					} else if code != 403 {
						t.Errorf("a token of another corporation's Director: %d %s, want 403", code, got)
					}
					// The last parameter points at a path without a document.
					params := pathParams(d.path)
					last := params[len(params)-1]
					missing := map[string]string{last: "2"}
					headers := good
					switch last {
					case "character_id", "corporation_id", "alliance_id":
						// Another owner, whose own corporation and alliance have
						// no documents.
						missing = map[string]string{"character_id": "90000003", "corporation_id": "98000003", "alliance_id": "99000003"}
						headers = bearer(ts.token(90000003, d.scope))
					}
					mp := concrete(d.path, missing)
					if code, got := call("/latest", mp, headers...); code != 404 || !strings.Contains(got, mp) {
						t.Errorf("%s: %d %s, want 404 naming the path", mp, code, got)
					}
					for _, bad := range []string{"x", "0", "-3", "01"} {
						if code, got := call("/latest", concrete(d.path, map[string]string{last: bad}), good...); code != 400 || !strings.Contains(got, last) {
							t.Errorf("%s = %q: %d %s, want 400 naming it", last, bad, code, got)
						}
					}
				})
			}
		})
	}
}

func TestDocumentWalletDivision(t *testing.T) {
	ts := newTestServer(t, documentFixture(), released(false))
	sp := newSpecs(ts)
	tok := bearer(ts.token(90000001, "esi-wallet.read_corporation_wallets.v1"))
	for div, status := range map[string]int{"1": 200, "7": 404, "8": 400, "0": 400} {
		rec := sp.do(t, http.MethodGet, "/v2/corporations/98000001/wallets/"+div+"/journal/", "", tok...)
		if rec.Code != status {
			t.Errorf("division %s: %d %s, want %d", div, rec.Code, rec.Body, status)
		}
	}
}

func TestDocumentPostBodies(t *testing.T) {
	ts := newTestServer(t, documentFixture(), released(false))
	sp := newSpecs(ts)
	tok := bearer(ts.token(90000001, "esi-assets.read_corporation_assets.v1"))
	ids := func(n int) string {
		return jsonList(n, func(i int) string { return fmt.Sprint(1000000000000 + i) })
	}
	for _, path := range []string{"/v1/corporations/98000001/assets/locations/", "/v1/corporations/98000001/assets/names/"} {
		for _, tc := range []struct {
			body   string
			status int
			msg    string
		}{
			{`[1]`, 200, ""},
			{ids(1000), 200, ""},
			{ids(1001), 400, "1 to 1000"},
			{`[]`, 400, "1 to 1000"},
			{``, 400, "missing"},
			{`[0]`, 400, "body[0]"},
			{`[1, -2]`, 400, "body[1]"},
			{`[1.5]`, 400, "body[0]"},
			{`["1"]`, 400, "body[0]"},
			{`{"item_ids":[1]}`, 400, "not a JSON array"},
		} {
			rec := sp.do(t, http.MethodPost, path, tc.body, tok...)
			if rec.Code != tc.status {
				t.Errorf("POST %s %.40s: %d %s, want %d", path, tc.body, rec.Code, rec.Body, tc.status)
				continue
			}
			if tc.msg != "" && !strings.Contains(errorOf(t, rec), tc.msg) {
				t.Errorf("POST %s %.40s: error %q, want it to mention %q", path, tc.body, errorOf(t, rec), tc.msg)
			}
		}
		if rec := ts.do(http.MethodGet, path, nil, tok...); rec.Code != http.StatusMethodNotAllowed && rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 405 or 404", path, rec.Code)
		}
	}
}
