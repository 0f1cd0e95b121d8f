package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

func named(id int64, name string, names snapshots.Localized) snapshots.Entity {
	return snapshots.Entity{ID: id, Name: name, Names: names}
}

// universeFixture holds one record of each looked-up kind, with localized
// names where the game has them, plus a bare one of most kinds.
func universeFixture() indexertest.Records {
	founded := time.Date(2010, 5, 1, 0, 0, 0, 0, time.UTC)
	birthday := time.Date(2012, 3, 4, 5, 6, 7, 0, time.UTC)
	return indexertest.Records{
		// Types carry a category_id (for the analysts), which ESI's type
		// answer has not: TestLookups's exact answers prove it stays out.
		snapshots.Types: {
			&snapshots.Type{Entity: named(587, "Rifter", snapshots.Localized{"de": "Rifter DE", "ja": "リフター"}),
				Description: "A Minmatar frigate.", Descriptions: snapshots.Localized{"de": "Eine Fregatte."},
				Published: true, GroupID: 25, CategoryID: 6, TypeDetails: snapshots.TypeDetails{MarketGroupID: ptr(int64(64)),
					Radius: ptr(31.0), Volume: ptr(27289.0), PackagedVolume: ptr(2500.0), Capacity: ptr(140.0),
					PortionSize: ptr(int64(1)), Mass: ptr(1067000.0), GraphicID: ptr(int64(46)), IconID: ptr(int64(587))},
				DogmaAttributes: []snapshots.DogmaAttribute{{AttributeID: 4, Value: 1067000}, {AttributeID: 9, Value: 350}},
				DogmaEffects:    []snapshots.DogmaEffect{{EffectID: 11, IsDefault: true}, {EffectID: 12, IsDefault: false}}},
			&snapshots.Type{Entity: named(34, "Tritanium", nil), GroupID: 18, CategoryID: 4},
		},
		snapshots.Characters: {
			&snapshots.Character{Entity: named(90000001, "Alpha Pilot", nil), CorporationID: corpA, AllianceID: 99000001,
				Birthday: &birthday, Gender: "female", RaceID: 2, BloodlineID: 4, AncestryID: 24,
				SecurityStatus: ptr(-1.5), Description: "Hello", Title: "CEO"},
			&snapshots.Character{Entity: named(90000002, "Bare Pilot", nil), CorporationID: corpA},
		},
		snapshots.Agents: {
			&snapshots.Agent{Entity: named(3008416, "Antaken Kamola", nil), CorporationID: 1000002, Level: 1},
		},
		snapshots.Corporations: {
			&snapshots.Corporation{Entity: named(corpA, "Alpha Corp", nil), Ticker: "ALPHA", MemberCount: 12,
				CEOID: 90000001, CreatorID: 90000001, AllianceID: 99000001, HomeStationID: 60003760, TaxRate: 0.1,
				DateFounded: &founded, Description: "We fly.", URL: "https://example.com", WarEligible: ptr(true)},
			&snapshots.Corporation{Entity: named(1000002, "CBD Corporation", snapshots.Localized{"de": "CBD Gesellschaft"}),
				Ticker: "CBD", MemberCount: 0, CEOID: 3004038, TaxRate: 0, FactionID: 500001, Shares: ptr(int64(30515077373)),
				Description: "An NPC corporation.", Descriptions: snapshots.Localized{"de": "Eine NPC-Corp."}, NPC: true},
		},
		snapshots.Stations: {
			&snapshots.Station{Entity: named(60003760, "Jita IV - Moon 4 - Caldari Navy Assembly Plant", nil),
				StationDetails: snapshots.StationDetails{SystemID: 30000142, TypeID: 1529, Owner: 1000035, RaceID: 1,
					Position: &snapshots.Position{X: 1, Y: -2, Z: 3.5}, ReprocessingEfficiency: 0.5, ReprocessingStationsTake: 0.05,
					MaxDockableShipVolume: 50000000, OfficeRentalCost: 10000},
				Services: []string{"market", "repair-facilities"}},
			&snapshots.Station{Entity: named(60000004, "Bare Station", nil),
				StationDetails: snapshots.StationDetails{SystemID: 30000142, TypeID: 1529}},
		},
		snapshots.Alliances: {
			&snapshots.Alliance{Entity: named(99000001, "Alpha Alliance", nil), Ticker: "A-A", CreatorID: 90000001,
				CreatorCorporationID: corpA, ExecutorCorporationID: corpA, DateFounded: &founded},
		},
		snapshots.Factions: {
			&snapshots.Faction{Entity: named(500001, "Caldari State", snapshots.Localized{"de": "Staat der Caldari"}),
				Description: "The State.", FactionDetails: snapshots.FactionDetails{CorporationID: 1000035, MilitiaCorporationID: 1000180,
					SolarSystemID: 30000145, SizeFactor: 5, StationCount: 1503, StationSystemCount: 503}},
			&snapshots.Faction{Entity: named(500002, "Minmatar Republic", nil), Description: "The Republic.",
				FactionDetails: snapshots.FactionDetails{IsUnique: true}},
		},
		snapshots.Regions: {
			&snapshots.Region{Entity: named(10000002, "The Forge", nil), Description: "Trade.", Constellations: []int64{20000020}},
		},
		snapshots.Constellations: {
			&snapshots.Constellation{Entity: named(20000020, "Kimotoro", nil), RegionID: 10000002, Systems: []int64{30000142},
				Position: &snapshots.Position{X: -1.35e17, Y: 6.5e16, Z: 1.03e17}},
		},
		snapshots.SolarSystems: {
			&snapshots.SolarSystem{Entity: named(30000142, "Jita", nil), ConstellationID: 20000020, SecurityStatus: 0.9459,
				SecurityClass: "B", StarID: 40009076, Position: &snapshots.Position{X: 1, Y: 2, Z: 3}, Stations: []int64{60003760},
				Planets:   []snapshots.Planet{{PlanetID: 40009077}, {PlanetID: 40009080, Moons: []int64{40009081}, AsteroidBelts: []int64{40009079}}},
				Stargates: []int64{50001248, 50001249}},
		},
	}
}

func TestLookups(t *testing.T) {
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			ts := backend(t, universeFixture(), released(false))
			sp := newSpecs(ts)
			for _, tc := range []struct {
				name, path string
				headers    []string
				status     int
				want       string // JSON, or a part of the error message
			}{
				{"type", "/v3/universe/types/587/", nil, 200, `{"type_id":587,"name":"Rifter","description":"A Minmatar frigate.",
					"published":true,"group_id":25,"market_group_id":64,"radius":31,"volume":27289,"packaged_volume":2500,
					"capacity":140,"portion_size":1,"mass":1067000,"graphic_id":46,"icon_id":587,
					"dogma_attributes":[{"attribute_id":4,"value":1067000},{"attribute_id":9,"value":350}],
					"dogma_effects":[{"effect_id":11,"is_default":true},{"effect_id":12,"is_default":false}]}`},
				{"type in German", "/latest/universe/types/587/?language=de", nil, 200, `{"type_id":587,"name":"Rifter DE",
					"description":"Eine Fregatte.","published":true,"group_id":25,"market_group_id":64,"radius":31,"volume":27289,
					"packaged_volume":2500,"capacity":140,"portion_size":1,"mass":1067000,"graphic_id":46,"icon_id":587,
					"dogma_attributes":[{"attribute_id":4,"value":1067000},{"attribute_id":9,"value":350}],
					"dogma_effects":[{"effect_id":11,"is_default":true},{"effect_id":12,"is_default":false}]}`},
				{"type by Accept-Language", "/v3/universe/types/34/", []string{"Accept-Language", "ja"}, 200,
					`{"type_id":34,"name":"Tritanium","description":"","published":false,"group_id":18}`},
				{"type in Japanese", "/v3/universe/types/587/?language=ja", nil, 200, ""},
				{"type unknown", "/v3/universe/types/999999/", nil, 404, "Type not found"},
				{"type malformed", "/v3/universe/types/rifter/", nil, 400, "type_id"},
				{"type zero", "/v3/universe/types/0/", nil, 400, "type_id"},
				{"type negative", "/v3/universe/types/-5/", nil, 400, "type_id"},
				{"type too big", "/v3/universe/types/99999999999999999999/", nil, 400, "type_id"},
				{"type bad language", "/v3/universe/types/587/?language=xx", nil, 400, "language"},
				{"type wrong version", "/v2/universe/types/587/", nil, 404, ""},

				{"character", "/v5/characters/90000001/", nil, 200, `{"name":"Alpha Pilot","corporation_id":98000001,
					"alliance_id":99000001,"birthday":"2012-03-04T05:06:07Z","gender":"female","race_id":2,"bloodline_id":4,
					"ancestry_id":24,"security_status":-1.5,"description":"Hello","title":"CEO"}`},
				{"character bare", "/latest/characters/90000002/", nil, 200, `{"name":"Bare Pilot","corporation_id":98000001}`},
				{"agent as character", "/v5/characters/3008416/", nil, 200, `{"name":"Antaken Kamola","corporation_id":1000002}`},
				{"character unknown", "/v5/characters/91234567/", nil, 404, "Character not found"},
				{"character malformed", "/v5/characters/1e5/", nil, 400, "character_id"},

				{"corporation", "/v5/corporations/98000001/", nil, 200, `{"name":"Alpha Corp","ticker":"ALPHA","member_count":12,
					"ceo_id":90000001,"creator_id":90000001,"alliance_id":99000001,"home_station_id":60003760,"tax_rate":0.1,
					"date_founded":"2010-05-01T00:00:00Z","description":"We fly.","url":"https://example.com","war_eligible":true}`},
				{"corporation as the spec spells it", "/v5/corporation/1000002/?language=de", nil, 200, `{"name":"CBD Gesellschaft",
					"ticker":"CBD","member_count":0,"ceo_id":3004038,"creator_id":1,"faction_id":500001,"tax_rate":0,
					"shares":30515077373,"description":"Eine NPC-Corp."}`},
				{"corporation unknown", "/latest/corporation/98999999/", nil, 404, "Corporation not found"},
				{"corporation malformed", "/v5/corporations/x/", nil, 400, "corporation_id"},

				{"station", "/v2/universe/stations/60003760/", nil, 200, `{"station_id":60003760,
					"name":"Jita IV - Moon 4 - Caldari Navy Assembly Plant","system_id":30000142,"type_id":1529,"owner":1000035,
					"race_id":1,"position":{"x":1,"y":-2,"z":3.5},"reprocessing_efficiency":0.5,"reprocessing_stations_take":0.05,
					"max_dockable_ship_volume":50000000,"office_rental_cost":10000,"services":["market","repair-facilities"]}`},
				{"station bare", "/v2/universe/stations/60000004/", nil, 200, `{"station_id":60000004,"name":"Bare Station",
					"system_id":30000142,"type_id":1529,"reprocessing_efficiency":0,"reprocessing_stations_take":0,
					"max_dockable_ship_volume":0,"office_rental_cost":0,"services":[]}`},
				{"station unknown", "/v2/universe/stations/60000001/", nil, 404, "Station not found"},
				{"station malformed", "/v2/universe/stations/007/", nil, 400, "station_id"},

				{"alliance", "/v4/alliances/99000001/", nil, 200, `{"name":"Alpha Alliance","ticker":"A-A","creator_id":90000001,
					"creator_corporation_id":98000001,"executor_corporation_id":98000001,"date_founded":"2010-05-01T00:00:00Z"}`},
				{"alliance unknown", "/v4/alliances/99000002/", nil, 404, "Alliance not found"},
				{"alliance malformed", "/v4/alliances/%20/", nil, 400, "alliance_id"},

				{"region", "/v1/universe/regions/10000002/", nil, 200,
					`{"region_id":10000002,"name":"The Forge","description":"Trade.","constellations":[20000020]}`},
				{"region unknown", "/v1/universe/regions/10000003/", nil, 404, "Region not found"},
				{"region malformed", "/v1/universe/regions/x/", nil, 400, "region_id"},
				{"constellation", "/v1/universe/constellations/20000020/", nil, 200,
					`{"constellation_id":20000020,"name":"Kimotoro","position":{"x":-1.35e17,"y":6.5e16,"z":1.03e17},
					"region_id":10000002,"systems":[30000142]}`},
				{"constellation unknown", "/v1/universe/constellations/20000021/", nil, 404, "Constellation not found"},
				{"constellation malformed", "/v1/universe/constellations/-1/", nil, 400, "constellation_id"},
				{"system", "/v4/universe/systems/30000142/", nil, 200, `{"system_id":30000142,"name":"Jita","constellation_id":20000020,
					"security_status":0.9459,"security_class":"B","star_id":40009076,"position":{"x":1,"y":2,"z":3},"stations":[60003760],
					"planets":[{"planet_id":40009077},{"planet_id":40009080,"moons":[40009081],"asteroid_belts":[40009079]}],
					"stargates":[50001248,50001249]}`},
				{"system unknown", "/v4/universe/systems/30000143/", nil, 404, "Solar system not found"},
				{"system malformed", "/v4/universe/systems/jita/", nil, 400, "system_id"},

				{"factions", "/v2/universe/factions/", nil, 200, `[
					{"faction_id":500001,"name":"Caldari State","description":"The State.","corporation_id":1000035,
					 "militia_corporation_id":1000180,"solar_system_id":30000145,"size_factor":5,"station_count":1503,
					 "station_system_count":503,"is_unique":false},
					{"faction_id":500002,"name":"Minmatar Republic","description":"The Republic.","size_factor":0,
					 "station_count":0,"station_system_count":0,"is_unique":true}]`},
				{"factions in German", "/latest/universe/factions/?language=de", nil, 200, ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					rec := sp.do(t, http.MethodGet, tc.path, "", tc.headers...)
					requireAnswer(t, rec, tc.status, tc.want)
				})
			}
			rec := sp.do(t, http.MethodGet, "/v3/universe/types/587/?language=ja", "")
			if !strings.Contains(rec.Body.String(), "リフター") {
				t.Errorf("Japanese type name missing: %s", rec.Body)
			}
			rec = sp.do(t, http.MethodGet, "/v2/universe/factions/?language=de", "")
			if !strings.Contains(rec.Body.String(), "Staat der Caldari") || !strings.Contains(rec.Body.String(), "Minmatar Republic") {
				t.Errorf("German factions: %s", rec.Body)
			}
		})
	}
}

func TestUniverseIDs(t *testing.T) {
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			ts := backend(t, universeFixture(), released(false))
			sp := newSpecs(ts)
			names := func(n int) string {
				return jsonList(n, func(i int) string { return fmt.Sprintf(`"name %d"`, i) })
			}
			for _, tc := range []struct {
				name, body string
				status     int
				want       string
			}{
				{"one of each", `["rifter","JITA","Alpha Pilot","Antaken Kamola","alpha corp","Alpha Alliance","Caldari State",
					"The Forge","Kimotoro","Bare Station"]`, 200, `{
					"inventory_types":[{"id":587,"name":"Rifter"}],"systems":[{"id":30000142,"name":"Jita"}],
					"characters":[{"id":90000001,"name":"Alpha Pilot"}],"agents":[{"id":3008416,"name":"Antaken Kamola"}],
					"corporations":[{"id":98000001,"name":"Alpha Corp"}],"alliances":[{"id":99000001,"name":"Alpha Alliance"}],
					"factions":[{"id":500001,"name":"Caldari State"}],"regions":[{"id":10000002,"name":"The Forge"}],
					"constellations":[{"id":20000020,"name":"Kimotoro"}],"stations":[{"id":60000004,"name":"Bare Station"}]}`},
				{"exact only", `["Rift","Jit"]`, 200, `{}`},
				{"localized name in another language", `["Rifter DE"]`, 200, `{}`},
				{"500 names", names(500), 200, `{}`},
				{"501 names", names(501), 400, "1 to 500"},
				{"empty list", `[]`, 400, "1 to 500"},
				{"not an array", `{"names":["Jita"]}`, 400, "not a JSON array"},
				{"number in list", `["Jita", 5]`, 400, "body[1]"},
				{"empty name", `["Jita", "  "]`, 400, "body[1]"},
				{"no body", ``, 400, "missing"},
				{"duplicate name", `["Jita", "Rifter", "Jita"]`, 400, "body[2]: non-unique items for 'names'"},
				{"names differing in case are distinct", `["Jita", "jita"]`, 200, `{"systems":[{"id":30000142,"name":"Jita"}]}`},
				{"100 characters", `["` + strings.Repeat("é", 100) + `"]`, 200, `{}`},
				{"101 characters", `["Jita", "` + strings.Repeat("é", 101) + `"]`, 400, "body[1]: string too long for 'name'"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					rec := sp.do(t, http.MethodPost, "/v1/universe/ids/", tc.body)
					requireAnswer(t, rec, tc.status, tc.want)
				})
			}
			rec := sp.do(t, http.MethodPost, "/v1/universe/ids/?language=de", `["rifter de"]`)
			requireJSONEqual(t, rec.Body.Bytes(), `{"inventory_types":[{"id":587,"name":"Rifter"}]}`)
		})
	}
}

func TestUniverseNames(t *testing.T) {
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			ts := backend(t, universeFixture(), released(false))
			sp := newSpecs(ts)
			ids := func(n int) string {
				return jsonList(n, func(i int) string { return fmt.Sprint(1 + i) })
			}
			for _, tc := range []struct {
				name, body string
				status     int
				want       string
			}{
				{"one of each", `[587, 30000142, 90000001, 3008416, 98000001, 99000001, 500001, 10000002, 20000020, 60003760]`, 200, `[
					{"category":"inventory_type","id":587,"name":"Rifter"},
					{"category":"solar_system","id":30000142,"name":"Jita"},
					{"category":"character","id":90000001,"name":"Alpha Pilot"},
					{"category":"character","id":3008416,"name":"Antaken Kamola"},
					{"category":"corporation","id":98000001,"name":"Alpha Corp"},
					{"category":"alliance","id":99000001,"name":"Alpha Alliance"},
					{"category":"faction","id":500001,"name":"Caldari State"},
					{"category":"region","id":10000002,"name":"The Forge"},
					{"category":"constellation","id":20000020,"name":"Kimotoro"},
					{"category":"station","id":60003760,"name":"Jita IV - Moon 4 - Caldari Navy Assembly Plant"}]`},
				{"one unknown", `[587, 12345]`, 404, "Ensure all IDs are valid before resolving"},
				{"1001 IDs", ids(1001), 400, "1 to 1000"},
				{"1000 IDs, unknown", ids(1000), 404, "Ensure all IDs are valid"},
				{"empty", `[]`, 400, "1 to 1000"},
				{"duplicate", `[587, 587]`, 400, "duplicate"},
				{"zero", `[0]`, 400, "body[0]"},
				{"negative", `[587, -1]`, 400, "body[1]"},
				{"fraction", `[5.5]`, 400, "body[0]"},
				{"string", `["587"]`, 400, "body[0]"},
				{"not JSON", `[587`, 400, "not a JSON array"},
				{"largest int32, unknown", `[2147483647]`, 404, "Ensure all IDs are valid"},
				{"beyond int32", `[587, 2147483648]`, 400, "body[1]: failed to coerce value '2147483648' into type integer (format: int32)"},
				{"a structure ID", `[1035466617946]`, 400, "format: int32"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					rec := sp.do(t, http.MethodPost, "/v3/universe/names/", tc.body)
					requireAnswer(t, rec, tc.status, tc.want)
				})
			}
			rec := sp.do(t, http.MethodPost, "/v3/universe/names/?language=de", `[587]`)
			requireJSONEqual(t, rec.Body.Bytes(), `[{"category":"inventory_type","id":587,"name":"Rifter DE"}]`)
		})
	}
}

func FuzzParseIDList(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, `[]`, `[0]`, `[1.5]`, `["1"]`, `[9223372036854775808]`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		ids, err := parseIDList(strings.NewReader(body), maxBulkIDs, true, math.MaxInt32)
		if err != nil {
			return
		}
		seen := map[int64]bool{}
		for _, id := range ids {
			if id <= 0 || seen[id] {
				t.Fatalf("accepted %v", ids)
			}
			seen[id] = true
		}
	})
}

// TestLookupCaching: lookups carry ESI's cache headers and answer 304 to
// a current If-None-Match; the validator differs per language.
func TestLookupCaching(t *testing.T) {
	ts := newTestServer(t, universeFixture(), released(false))
	sp := newSpecs(ts)
	rec := sp.do(t, http.MethodGet, "/v3/universe/types/587/", "")
	etag := rec.Header().Get("ETag")
	if etag == "" || !strings.Contains(rec.Header().Get("Cache-Control"), "public") || rec.Header().Get("Expires") == "" {
		t.Fatalf("cache headers missing: %v", rec.Header())
	}
	rec = sp.do(t, http.MethodGet, "/v3/universe/types/587/", "", "If-None-Match", etag)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match current: %d %q, want an empty 304", rec.Code, rec.Body)
	}
	rec = sp.do(t, http.MethodGet, "/v3/universe/types/587/?language=de", "", "If-None-Match", etag)
	if rec.Code != http.StatusOK {
		t.Errorf("another language with the English ETag: %d, want 200", rec.Code)
	}
	if rec := sp.do(t, http.MethodGet, "/v3/universe/types/587/?datasource=singularity", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("datasource=singularity: %d, want 400", rec.Code)
	}
	if rec := sp.do(t, http.MethodGet, "/v3/universe/types/587/?datasource=tranquility", ""); rec.Code != http.StatusOK {
		t.Errorf("datasource=tranquility: %d, want 200", rec.Code)
	}
}

// An unknown ID is a 404 that no cache keeps for the hour a record is
// kept: no-cache, no ETag, no dates, and never a 304, not even to "*".
func TestNotFoundIsNotCached(t *testing.T) {
	ts := newTestServer(t, universeFixture(), released(false))
	for _, path := range []string{"/v3/universe/types/999999/", "/latest/characters/91234567/",
		"/latest/universe/systems/30000143/", "/v2/nothing/here/"} {
		for _, inm := range []string{"", "*"} {
			var headers []string
			if inm != "" {
				headers = []string{"If-None-Match", inm}
			}
			rec := ts.do(http.MethodGet, path, nil, headers...)
			h := rec.Header()
			if rec.Code != http.StatusNotFound || h.Get("Cache-Control") != "no-cache" || h.Get("ETag") != "" ||
				h.Get("Expires") != "" || h.Get("Last-Modified") != "" {
				t.Errorf("%s (If-None-Match %q): %d %v", path, inm, rec.Code, h)
			}
		}
	}
	// A found record keeps its hour.
	if rec := ts.do(http.MethodGet, "/v3/universe/types/587/", nil); rec.Header().Get("Cache-Control") != "public, max-age=3600" ||
		rec.Header().Get("ETag") == "" {
		t.Errorf("found: %v", rec.Header())
	}
}

// FuzzSplitIntArray checks the ID lists' fast path against encoding/json:
// whatever it splits, encoding/json reads as the same raw elements.
func FuzzSplitIntArray(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, ` [ 30000142 , 34 ]` + "\n", `[]`, `[-0,01]`, `[1.5]`, `[1,]`, `[1 2]`, `[1]x`, `["1"]`, `[9223372036854775808]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := splitIntArray(body)
		if !ok {
			return
		}
		var want []json.RawMessage
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("split %q, which encoding/json refuses: %v", body, err)
		}
		if len(fast) != len(want) {
			t.Fatalf("%q: %d elements, encoding/json %d", body, len(fast), len(want))
		}
		for i := range want {
			if !bytes.Equal(fast[i], want[i]) {
				t.Fatalf("%q: element %d is %q, encoding/json %q", body, i, fast[i], want[i])
			}
		}
	})
}

// BenchmarkParseIDList reads the body of a POST /universe/names/ of 20
// character IDs.
func BenchmarkParseIDList(b *testing.B) {
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = fmt.Sprint(2112000001 + 2*i)
	}
	body := "[" + strings.Join(ids, ",") + "]"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseIDList(strings.NewReader(body), maxBulkIDs, true, math.MaxInt32); err != nil {
			b.Fatal(err)
		}
	}
}
