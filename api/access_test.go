package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"gds/api/auth"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// TestAccessControlProperty is a property test of who sees which
// structures. A seeded random universe (characters in corporations with
// random roles, structures with random access lists and names drawn from
// a small vocabulary so searches overlap) is indexed for real; random
// tokens (valid ones for random characters with random scopes, and every
// kind of bad one) make random requests to the character search with the
// structure category and to the corporation structures list. Every
// answer is checked against what the generated data says it must be:
//
//   - a bad token (bad signature, alg none, wrong issuer or audience,
//     expired, unknown key, garbage) is refused with 401;
//   - a token for another character than the path's, or without the
//     route's scope, gets 403;
//   - a search returns exactly the structures whose name contains the
//     text and whose access list holds the character, never another;
//   - every corporation route (the structures list and every document
//     route) answers only a member of that very corporation holding one
//     of the route's roles (a Director holds all), with exactly that
//     corporation's structures or document; the alliance route only a
//     member of that alliance.
func TestAccessControlProperty(t *testing.T) {
	const (
		seed1, seed2 = 2026, 11
		nCorps       = 7
		nChars       = 50
		nStructures  = 120
		nRequests    = 3000
	)
	rng := rand.New(rand.NewPCG(seed1, seed2))
	words := []string{"Alpha", "Bravo", "Keep", "Fort", "Haven", "Spire", "Tower", "Jita"}
	charID := func(i int) int64 { return int64(92000000 + i) }
	corpID := func(i int) int64 { return int64(98200000 + i) }
	allianceOf := func(corp int64) int64 { return 99200000 + corp%3 }

	// The universe.
	type structure struct {
		id, corp int64
		name     string
		access   []int64
	}
	var structures []structure
	var structRecs []snapshots.Record
	for i := range nStructures {
		s := structure{id: int64(1030000000000 + i), corp: corpID(rng.IntN(nCorps)),
			name: fmt.Sprintf("%s %s %d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], i)}
		for range rng.IntN(6) { // 0 to 5 characters, maybe repeated
			s.access = append(s.access, charID(rng.IntN(nChars)))
		}
		structures = append(structures, s)
		structRecs = append(structRecs, &snapshots.Structure{ID: s.id, Name: s.name, TypeID: 35832,
			CorporationID: s.corp, SystemID: 30000142, State: "shield_vulnerable", Access: slices.Clone(s.access)})
	}
	roleNames := []string{RoleStationManager, RoleDirector, RoleAccountant, RoleJuniorAccountant, RoleFactoryManager,
		RoleTrader, "Station_Manager_Lite", "station_manager"}
	type member struct {
		corp      int64
		roles     []string // held in rolesCorp
		rolesCorp int64
	}
	members := map[int64]member{}
	var roleRecs, charRecs []snapshots.Record
	for i := range nChars {
		id := charID(i)
		corp := corpID(rng.IntN(nCorps))
		charRecs = append(charRecs, &snapshots.Character{Entity: indexertest.Named(id, fmt.Sprintf("Pilot %d", i)),
			CorporationID: corp, AllianceID: allianceOf(corp)})
		m := member{corp: corp}
		if rng.IntN(6) != 0 { // else no roles record at all
			m.rolesCorp = corp
			if rng.IntN(10) == 0 {
				m.rolesCorp = corpID(rng.IntN(nCorps)) // roles held in another corporation
			}
			for _, r := range roleNames {
				if rng.IntN(4) == 0 {
					m.roles = append(m.roles, r)
				}
			}
			roleRecs = append(roleRecs, &snapshots.CharacterRoles{CharacterID: id, CorporationID: m.rolesCorp, Roles: m.roles})
		}
		members[id] = m
	}
	// may says whether the character may read a corporation route needing
	// one of roles in corp.
	may := func(character, corp int64, roles []string) bool {
		m := members[character]
		if m.corp != corp {
			return false
		}
		if len(roles) == 0 {
			return true
		}
		return m.rolesCorp == corp && (slices.Contains(m.roles, RoleDirector) ||
			slices.ContainsFunc(roles, func(r string) bool { return slices.Contains(m.roles, r) }))
	}

	// Every corporation (and alliance) document route, with a document
	// per corporation (alliance) whose body names its path.
	var corpRoutes []documentRoute
	var docRecs []snapshots.Record
	for _, d := range documentTable {
		if characterRoute(d.path) {
			continue
		}
		corpRoutes = append(corpRoutes, d)
		for i := range nCorps {
			p := concrete(d.path, map[string]string{"corporation_id": fmt.Sprint(corpID(i)), "alliance_id": fmt.Sprint(allianceOf(corpID(i)))})
			docRecs = append(docRecs, &snapshots.Document{Seq: int64(len(docRecs) + 1), Path: p, Body: json.RawMessage(fmt.Sprintf(`{"path":%q}`, p))})
		}
	}
	ts := newTestServer(t, indexertest.Records{
		snapshots.Structures: structRecs, snapshots.Roles: roleRecs, snapshots.Characters: charRecs,
		snapshots.Documents: uniqueDocuments(docRecs),
	}, func(d *Deps) { d.Limits.ErrorLimit, d.Limits.RateLimitsOff = -1, true })

	// The tokens.
	type token struct {
		kind      string // "valid" or what is wrong with it
		character int64
		scopes    []string
		raw       string
	}
	other := otherKeyOnce()
	forged := auth.SigningKey{ID: ts.key.ID, Private: other} // the server's kid, another key
	stranger := auth.NewSigningKey(other)                    // a kid the server does not know
	sign := func(key auth.SigningKey, o auth.MintOptions) string {
		t.Helper()
		if o.Now.IsZero() {
			o.Now = ts.clock.Now()
		}
		raw, err := auth.Mint(key, o)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	allScopes := []string{ScopeSearchStructures, scopeReadStructures, scopeWriteStructures, "esi-skills.read_skills.v1"}
	for _, d := range corpRoutes {
		if !slices.Contains(allScopes, d.scope) {
			allScopes = append(allScopes, d.scope)
		}
	}
	var tokens []token
	for range 120 {
		tk := token{kind: "valid", character: charID(rng.IntN(nChars))}
		for _, s := range allScopes {
			if rng.IntN(4) != 0 {
				tk.scopes = append(tk.scopes, s)
			}
		}
		tk.raw = sign(ts.key, auth.MintOptions{CharacterID: tk.character, Scopes: tk.scopes})
		tokens = append(tokens, tk)
	}
	// Bad tokens carry every scope, so only their badness can refuse them.
	for range 8 {
		c := charID(rng.IntN(nChars))
		o := auth.MintOptions{CharacterID: c, Scopes: allScopes}
		good := sign(ts.key, o)
		parts := strings.Split(good, ".")
		none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"` + ts.key.ID + `"}`))
		expired, wrongIss, wrongAud := o, o, o
		expired.Now, expired.TTL = ts.clock.Now().Add(-2*time.Hour), 20*time.Minute
		wrongIss.Issuer = "login.example.com"
		wrongAud.Audience = []string{"someone-else"}
		for kind, raw := range map[string]string{
			"bad signature":        sign(forged, o),
			"unknown key":          sign(stranger, o),
			"alg none":             none + "." + parts[1] + ".",
			"alg none, signed":     none + "." + parts[1] + "." + parts[2],
			"payload swapped":      parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"CHARACTER:EVE:1"}`)) + "." + parts[2],
			"expired":              sign(ts.key, expired),
			"wrong issuer":         sign(ts.key, wrongIss),
			"wrong audience":       sign(ts.key, wrongAud),
			"truncated signature":  good[:len(good)-10],
			"garbage":              "not-a-token",
			"signature of another": parts[0] + "." + parts[1] + "." + strings.Split(sign(ts.key, auth.MintOptions{CharacterID: c + 1, Scopes: allScopes}), ".")[2],
		} {
			tokens = append(tokens, token{kind: kind, character: c, scopes: allScopes, raw: raw})
		}
	}

	// The requests.
	counts := map[string]int{}
	for range nRequests {
		tk := tokens[rng.IntN(len(tokens))]
		viaQuery := rng.IntN(4) == 0 // ?token= as well as the header
		send := func(path string, post ...string) (int, string) {
			t.Helper()
			var headers []string
			if viaQuery {
				sep := "&"
				if !strings.Contains(path, "?") {
					sep = "?"
				}
				path += sep + "token=" + url.QueryEscape(tk.raw)
			} else {
				headers = bearer(tk.raw)
			}
			method, body := http.MethodGet, io.Reader(nil)
			if len(post) > 0 {
				method, body = http.MethodPost, strings.NewReader(post[0])
			}
			rec := ts.do(method, path, body, headers...)
			if rec.Code != http.StatusOK {
				errorOf(t, rec) // every refusal is a JSON error
			}
			return rec.Code, rec.Body.String()
		}
		if rng.IntN(2) == 0 {
			// Character search, usually for the token's own character.
			pathChar := tk.character
			if rng.IntN(5) == 0 {
				pathChar = charID(rng.IntN(nChars))
			}
			text := strings.ToLower(words[rng.IntN(len(words))])
			if rng.IntN(3) == 0 {
				text = words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
			}
			path := fmt.Sprintf("/latest/characters/%d/search/?search=%s&categories=structure,character", pathChar, url.QueryEscape(text))
			status, body := send(path)
			var want int
			switch {
			case tk.kind != "valid":
				want = http.StatusUnauthorized
			case pathChar != tk.character || !slices.Contains(tk.scopes, ScopeSearchStructures):
				want = http.StatusForbidden
			default:
				want = http.StatusOK
			}
			counts[fmt.Sprintf("search %d", want)]++
			if status != want {
				t.Fatalf("token %s for %d scopes %v, %s: %d %s, want %d", tk.kind, tk.character, tk.scopes, path, status, body, want)
			}
			if want != http.StatusOK {
				continue
			}
			var got map[string][]int64
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("search answer %q: %v", body, err)
			}
			var expect []int64
			for _, s := range structures {
				if strings.Contains(strings.ToLower(s.name), strings.ToLower(text)) && slices.Contains(s.access, pathChar) {
					expect = append(expect, s.id)
				}
			}
			for _, id := range got["structure"] {
				i := slices.IndexFunc(structures, func(s structure) bool { return s.id == id })
				if i < 0 || !slices.Contains(structures[i].access, pathChar) {
					t.Fatalf("LEAK: character %d searching %q got structure %d outside its access list", pathChar, text, id)
				}
			}
			gotIDs := slices.Sorted(slices.Values(got["structure"]))
			if !slices.Equal(gotIDs, expect) {
				t.Fatalf("character %d searching %q: structures %v, want %v", pathChar, text, gotIDs, expect)
			}
			if len(expect) > 0 {
				counts["search with structures"]++
			}
			continue
		}

		corp := corpID(rng.IntN(nCorps + 1)) // one corporation owns nothing
		if m, ok := members[tk.character]; ok && rng.IntN(4) != 0 {
			corp = m.corp // often the token's own corporation, where its roles are
		}
		m := members[tk.character]
		if i := rng.IntN(len(corpRoutes) + 1); i < len(corpRoutes) {
			// A corporation (or alliance) document route.
			d := corpRoutes[i]
			alliance := allianceOf(corp)
			if rng.IntN(4) == 0 {
				alliance = 99200000 + int64(rng.IntN(4))
			}
			path := "/latest" + concrete(d.path, map[string]string{"corporation_id": fmt.Sprint(corp), "alliance_id": fmt.Sprint(alliance)})
			var post []string
			if d.method == http.MethodPost {
				post = []string{"[1000000016991]"}
			}
			status, body := send(path, post...)
			allowed := may(tk.character, corp, d.roles)
			if allianceRoute(d.path) {
				allowed = allianceOf(m.corp) == alliance
			}
			var want int
			switch {
			case tk.kind != "valid":
				want = http.StatusUnauthorized
			case !slices.Contains(tk.scopes, d.scope) || !allowed:
				want = http.StatusForbidden
			default:
				want = http.StatusOK
				if (allianceRoute(d.path) && alliance == 99200003) || (!allianceRoute(d.path) && corp == corpID(nCorps)) {
					want = http.StatusNotFound // no documents for it
				}
			}
			key := d.method + " " + d.path
			counts[fmt.Sprintf("%s %d", key, want)]++
			if status != want {
				t.Fatalf("token %s for %d (%+v) scopes %v, %s: %d %s, want %d", tk.kind, tk.character, m, tk.scopes, path, status, body, want)
			}
			if want == http.StatusOK && body != fmt.Sprintf(`{"path":%q}`, strings.TrimPrefix(path, "/latest")) {
				t.Fatalf("LEAK or mix-up: %s answered %s", path, body)
			}
			continue
		}

		// Corporation structures list.
		path := fmt.Sprintf("/latest/corporations/%d/structures/?page=1", corp)
		status, body := send(path)
		var want int
		switch {
		case tk.kind != "valid":
			want = http.StatusUnauthorized
		case !slices.Contains(tk.scopes, scopeReadStructures) || !may(tk.character, corp, structureRoles):
			want = http.StatusForbidden
		default:
			want = http.StatusOK
		}
		counts[fmt.Sprintf("list %d", want)]++
		if status != want {
			t.Fatalf("token %s for %d (%+v) scopes %v, %s: %d %s, want %d", tk.kind, tk.character, m, tk.scopes, path, status, body, want)
		}
		if want != http.StatusOK {
			continue
		}
		var list []struct {
			ID   int64 `json:"structure_id"`
			Corp int64 `json:"corporation_id"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("list answer %q: %v", body, err)
		}
		var got, expect []int64
		for _, s := range list {
			if s.Corp != corp {
				t.Fatalf("LEAK: corporation %d's list holds structure %d of %d", corp, s.ID, s.Corp)
			}
			got = append(got, s.ID)
		}
		for _, s := range structures {
			if s.corp == corp {
				expect = append(expect, s.id)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, expect) {
			t.Fatalf("corporation %d: listed %v, want %v", corp, got, expect)
		}
	}
	t.Logf("%d requests: %v", nRequests, counts)
	// The draw must have exercised every outcome, or the property is
	// vacuous for the missing one.
	want := []string{"search 200", "search 401", "search 403", "search with structures", "list 200", "list 401", "list 403"}
	for _, d := range corpRoutes {
		want = append(want, d.method+" "+d.path+" 200", d.method+" "+d.path+" 403")
	}
	for _, k := range want {
		if counts[k] == 0 {
			t.Errorf("no request ended as %q: change the seed or the sizes", k)
		}
	}
}

// uniqueDocuments drops documents whose path an earlier one has (alliance
// routes repeat for corporations of one alliance).
func uniqueDocuments(docs []snapshots.Record) []snapshots.Record {
	seen := map[string]bool{}
	var out []snapshots.Record
	for _, r := range docs {
		d := r.(*snapshots.Document)
		if !seen[d.Path] {
			seen[d.Path] = true
			d.Seq = int64(len(out) + 1)
			out = append(out, d)
		}
	}
	return out
}
