package main

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// sample is what the calls need from the snapshot: IDs that exist, who
// holds which roles, and the paths that have documents.
type sample struct {
	character, agent, alliance, playerCorp int64
	playerName                             string
	members                                map[int64]int64 // character → corporation
	allianceOf                             map[int64]int64 // character → alliance
	roles                                  map[int64]map[string]bool
	corpOf                                 map[int64]int64 // roles' corporation by character
	documents                              []string
	structureCorp                          map[int64]bool
}

func readSample(dir string) (*sample, error) {
	s := &sample{members: map[int64]int64{}, allianceOf: map[int64]int64{}, roles: map[int64]map[string]bool{},
		corpOf: map[int64]int64{}, structureCorp: map[int64]bool{}}
	err := eachLine(dir, "characters", func(m map[string]any) {
		id, corp := num(m["id"]), num(m["corporation_id"])
		s.members[id] = corp
		if a := num(m["alliance_id"]); a != 0 {
			s.allianceOf[id] = a
		}
		if s.character == 0 {
			s.character, s.playerCorp, s.playerName = id, corp, m["name"].(string)
		}
	})
	if err != nil {
		return nil, err
	}
	steps := []struct {
		kind string
		fn   func(map[string]any)
	}{
		{"agents", func(m map[string]any) {
			if s.agent == 0 {
				s.agent = num(m["id"])
			}
		}},
		{"alliances", func(m map[string]any) {
			if s.alliance == 0 {
				s.alliance = num(m["id"])
			}
		}},
		{"roles", func(m map[string]any) {
			id := num(m["character_id"])
			s.corpOf[id] = num(m["corporation_id"])
			s.roles[id] = map[string]bool{}
			for _, r := range m["roles"].([]any) {
				s.roles[id][r.(string)] = true
			}
		}},
		{"documents", func(m map[string]any) { s.documents = append(s.documents, m["path"].(string)) }},
		{"structures", func(m map[string]any) { s.structureCorp[num(m["corporation_id"])] = true }},
	}
	for _, st := range steps {
		if err := eachLine(dir, st.kind, st.fn); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func eachLine(dir, kind string, fn func(map[string]any)) error {
	f, err := os.Open(filepath.Join(dir, kind+".jsonl.gz"))
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		fn(m)
	}
	return sc.Err()
}

// call is one request to make: an ESI operation with concrete values.
type call struct {
	method, template string // ESI's path template
	path             string // concrete, without the version prefix
	query, body      string
	character        int64 // token for this character when > 0
	scopes           []string
	note             string // what the call exercises
}

// labels are the version prefixes every route is tried under; those gds
// does not serve for a route answer its "no such version" 404 and are
// skipped.
var labels = []string{"latest", "legacy", "dev", "v1", "v2", "v3", "v4", "v5", "v6"}

// plan lists the calls: for every operation of ESI's document, concrete
// values from the sample; operations gds lacks are found out by the calls.
func plan(doc *openapi3.T, s *sample) []call {
	var out []call
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, tmpl := range paths {
		item := doc.Paths.Value(tmpl)
		for method, op := range item.Operations() {
			out = append(out, s.calls(method, tmpl, op)...)
		}
	}
	return out
}

var allCategories = "agent,alliance,character,constellation,corporation,faction,inventory_type,region,solar_system,station"

func (s *sample) calls(method, tmpl string, op *openapi3.Operation) []call {
	scopes := operationScopes(op)
	fixed := map[string]int64{
		"type_id": 587, "system_id": 30000142, "constellation_id": 20000020, "region_id": 10000002,
		"station_id": 60003760, "alliance_id": s.alliance, "corporation_id": s.playerCorp, "character_id": s.character,
	}
	base := call{method: method, template: tmpl, scopes: scopes}
	switch tmpl {
	case "/search/":
		c := base
		c.query = "search=jita&" + categoriesQuery(op, allCategories)
		return []call{c}
	case "/characters/{character_id}/search/":
		c := base
		c.path = fmt.Sprintf("/characters/%d/search/", s.character)
		c.query = "search=jita&" + categoriesQuery(op, allCategories+",structure")
		c.character = s.character
		return []call{c}
	case "/universe/ids/":
		c := base
		c.body = fmt.Sprintf(`["Jita", "Tritanium", "Caldari Navy", %q]`, s.playerName)
		return []call{c}
	case "/characters/affiliation/":
		c := base
		c.body = fmt.Sprintf(`[%d, %d]`, s.character, s.agent)
		return []call{c}
	case "/universe/names/":
		c := base
		c.body = fmt.Sprintf(`[30000142, 587, 1000035, %d, %d]`, s.character, s.playerCorp)
		return []call{c}
	case "/characters/{character_id}/":
		player, agent := base, base
		player.path, player.note = fmt.Sprintf("/characters/%d/", s.character), "player"
		agent.path, agent.note = fmt.Sprintf("/characters/%d/", s.agent), "agent"
		return []call{player, agent}
	case "/corporations/{corporation_id}/":
		player, npc := base, base
		player.path, player.note = fmt.Sprintf("/corporations/%d/", s.playerCorp), "player"
		npc.path, npc.note = "/corporations/1000035/", "NPC"
		return []call{player, npc}
	case "/corporations/{corporation_id}/structures/":
		for ch, rs := range s.roles {
			if rs["Station_Manager"] && s.structureCorp[s.corpOf[ch]] {
				c := base
				c.path = fmt.Sprintf("/corporations/%d/structures/", s.corpOf[ch])
				c.character, c.note = ch, "Station_Manager"
				return []call{c}
			}
		}
		return nil
	}
	if len(scopes) > 0 {
		calls := s.documentCalls(base)
		for i := range calls {
			calls[i].query = requiredQuery(op)
		}
		return calls
	}
	path, ok := fill(tmpl, fixed)
	if !ok {
		return []call{{method: method, template: tmpl, path: tmpl, note: "no value for a path parameter"}}
	}
	c := base
	c.path = path
	return []call{c}
}

// documentCalls call an authenticated route at a path the sample has a
// document for, with a token of its character or of a Director of its
// corporation (or, for an alliance, a member of it).
// categoriesQuery is the categories parameter as the operation declares
// it: comma-separated (ESI's Swagger documents), or exploded, one
// parameter per category (its 2025 OpenAPI document).
func categoriesQuery(op *openapi3.Operation, list string) string {
	if p := op.Parameters.GetByInAndName(openapi3.ParameterInQuery, "categories"); p != nil && p.Explode != nil && *p.Explode {
		return "categories=" + strings.ReplaceAll(list, ",", "&categories=")
	}
	return "categories=" + list
}

func (s *sample) documentCalls(base call) []call {
	for _, p := range s.documents {
		ids, ok := match(base.template, p)
		if !ok {
			continue
		}
		c := base
		c.path = p
		switch {
		case ids["character_id"] != 0:
			c.character = ids["character_id"]
		case ids["corporation_id"] != 0:
			for ch, rs := range s.roles {
				if rs["Director"] && s.corpOf[ch] == ids["corporation_id"] && s.members[ch] == ids["corporation_id"] {
					c.character, c.note = ch, "Director"
					break
				}
			}
		case ids["alliance_id"] != 0:
			c.character, c.note = s.memberOf(ids["alliance_id"]), "member"
		}
		if c.method == "POST" {
			c.body = `[1000000016991]`
		}
		return []call{c}
	}
	return []call{{method: base.method, template: base.template, note: "no document in the sample"}}
}

// memberOf is the lowest ID of a character in alliance (ESI answers an
// alliance's documents to its members only), or the sample's first
// character when none is.
func (s *sample) memberOf(alliance int64) int64 {
	var out int64
	for ch, a := range s.allianceOf {
		if a == alliance && (out == 0 || ch < out) {
			out = ch
		}
	}
	return cmp.Or(out, s.character)
}

// fill writes template with values; false when one is missing.
func fill(tmpl string, values map[string]int64) (string, bool) {
	segs := strings.Split(tmpl, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") {
			v, ok := values[seg[1:len(seg)-1]]
			if !ok || v == 0 {
				return "", false
			}
			segs[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(segs, "/"), true
}

// match reports whether path fits template, with its parameters.
func match(tmpl, path string) (map[string]int64, bool) {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return nil, false
	}
	ids := map[string]int64{}
	for i := range ts {
		if strings.HasPrefix(ts[i], "{") {
			var v int64
			if _, err := fmt.Sscan(ps[i], &v); err != nil {
				return nil, false
			}
			ids[ts[i][1:len(ts[i])-1]] = v
		} else if ts[i] != ps[i] {
			return nil, false
		}
	}
	return ids, true
}

// operationScopes are the SSO scopes the operation's security names.
func operationScopes(op *openapi3.Operation) []string {
	if op.Security == nil {
		return nil
	}
	var out []string
	for _, req := range *op.Security {
		for _, scopes := range req {
			out = append(out, scopes...)
		}
	}
	return out
}

// queryValues are values for the required query parameters of the
// document routes (the starbase detail's system_id: gds ignores it).
var queryValues = map[string]string{"system_id": "30000142"}

// requiredQuery is the query string of op's required query parameters.
func requiredQuery(op *openapi3.Operation) string {
	var parts []string
	for _, p := range op.Parameters {
		if v := p.Value; v != nil && v.In == openapi3.ParameterInQuery && v.Required {
			parts = append(parts, v.Name+"="+queryValues[v.Name])
		}
	}
	return strings.Join(parts, "&")
}
