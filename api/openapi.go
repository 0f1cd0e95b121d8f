package api

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The OpenAPI document is OpenAPI 3.0 (ESI publishes Swagger 2.0; 3.0 is
// what kin-openapi validates responses against). It is generated from the
// route table for one prefix at one moment, so it always matches what the
// server answers under that prefix.

// Schema builders keep the route table's Doc entries short.

func schemaInt64() map[string]any  { return map[string]any{"type": "integer", "format": "int64"} }
func schemaInt32() map[string]any  { return map[string]any{"type": "integer", "format": "int32"} }
func schemaNumber() map[string]any { return map[string]any{"type": "number", "format": "double"} }
func schemaFloat() map[string]any  { return map[string]any{"type": "number", "format": "float"} }
func schemaString() map[string]any { return map[string]any{"type": "string"} }
func schemaBool() map[string]any   { return map[string]any{"type": "boolean"} }
func schemaDateTime() map[string]any {
	return map[string]any{"type": "string", "format": "date-time"}
}

func schemaRange(s map[string]any, min, max int) map[string]any {
	s["minimum"], s["maximum"] = min, max
	return s
}

func schemaEnum(values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values}
}

func schemaArray(items map[string]any, min, max int) map[string]any {
	s := map[string]any{"type": "array", "items": items}
	if min > 0 {
		s["minItems"] = min
	}
	if max > 0 {
		s["maxItems"] = max
	}
	return s
}

func arrayOf(items map[string]any) map[string]any { return schemaArray(items, 0, 0) }

// object is a closed object schema: any field the table does not describe
// fails the OpenAPI validation test, so code and document cannot drift.
func object(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// anyJSON is the schema of the opaque documents (docs/api.md, Character and
// corporation documents).
func anyJSON() map[string]any { return map[string]any{} }

var positionSchema = object([]string{"x", "y", "z"}, map[string]any{
	"x": schemaNumber(), "y": schemaNumber(), "z": schemaNumber(),
})

var typeSchema = object([]string{"description", "group_id", "name", "published", "type_id"}, map[string]any{
	"type_id": schemaInt32(), "name": schemaString(), "description": schemaString(),
	"published": schemaBool(), "group_id": schemaInt32(), "market_group_id": schemaInt32(),
	"radius": schemaFloat(), "volume": schemaFloat(), "packaged_volume": schemaFloat(),
	"capacity": schemaFloat(), "portion_size": schemaInt32(), "mass": schemaFloat(),
	"graphic_id": schemaInt32(), "icon_id": schemaInt32(),
	"dogma_attributes": schemaArray(object([]string{"attribute_id", "value"}, map[string]any{
		"attribute_id": schemaInt32(), "value": schemaFloat(),
	}), 0, 1000),
	"dogma_effects": schemaArray(object([]string{"effect_id", "is_default"}, map[string]any{
		"effect_id": schemaInt32(), "is_default": schemaBool(),
	}), 0, 1000),
})

var characterSchema = object([]string{"corporation_id", "name"}, map[string]any{
	"name": schemaString(), "corporation_id": schemaInt32(), "alliance_id": schemaInt32(),
	"faction_id": schemaInt32(), "birthday": schemaDateTime(), "gender": schemaEnum("female", "male"),
	"race_id": schemaInt32(), "bloodline_id": schemaInt32(), "ancestry_id": schemaInt32(),
	"security_status": schemaRange(schemaFloat(), -10, 10), "description": schemaString(),
	"title": schemaString(),
})

var corporationSchema = object([]string{"member_count", "name", "tax_rate", "ticker"}, map[string]any{
	"name": schemaString(), "ticker": schemaString(), "member_count": schemaInt32(),
	"ceo_id": schemaInt32(), "creator_id": schemaInt32(), "alliance_id": schemaInt32(),
	"faction_id": schemaInt32(), "home_station_id": schemaInt32(),
	"tax_rate": schemaRange(schemaFloat(), 0, 1), "date_founded": schemaDateTime(),
	"description": schemaString(), "url": schemaString(), "war_eligible": schemaBool(),
	"shares": schemaInt64(),
})

var stationSchema = object([]string{
	"max_dockable_ship_volume", "name", "office_rental_cost", "reprocessing_efficiency",
	"reprocessing_stations_take", "services", "station_id", "system_id", "type_id",
}, map[string]any{
	"station_id": schemaInt32(), "name": schemaString(), "system_id": schemaInt32(),
	"type_id": schemaInt32(), "owner": schemaInt32(), "race_id": schemaInt32(),
	"position": positionSchema, "reprocessing_efficiency": schemaFloat(),
	"reprocessing_stations_take": schemaFloat(), "max_dockable_ship_volume": schemaFloat(),
	"office_rental_cost": schemaFloat(), "services": schemaArray(schemaString(), 0, 30),
})

var allianceSchema = object([]string{"name", "ticker"}, map[string]any{
	"name": schemaString(), "ticker": schemaString(), "creator_id": schemaInt32(),
	"creator_corporation_id": schemaInt32(), "executor_corporation_id": schemaInt32(),
	"date_founded": schemaDateTime(), "faction_id": schemaInt32(),
})

var regionSchema = object([]string{"constellations", "name", "region_id"}, map[string]any{
	"region_id": schemaInt32(), "name": schemaString(), "description": schemaString(),
	"constellations": arrayOf(schemaInt32()),
})

var constellationSchema = object([]string{"constellation_id", "name", "region_id", "systems"}, map[string]any{
	"constellation_id": schemaInt32(), "name": schemaString(), "region_id": schemaInt32(),
	"systems": arrayOf(schemaInt32()), "position": positionSchema,
})

var systemSchema = object([]string{"constellation_id", "name", "security_status", "system_id"}, map[string]any{
	"system_id": schemaInt32(), "name": schemaString(), "constellation_id": schemaInt32(),
	"security_status": schemaFloat(), "security_class": schemaString(), "star_id": schemaInt32(),
	"position": positionSchema, "stations": arrayOf(schemaInt32()), "stargates": arrayOf(schemaInt32()),
	"planets": arrayOf(object([]string{"planet_id"}, map[string]any{
		"planet_id": schemaInt32(), "moons": arrayOf(schemaInt32()), "asteroid_belts": arrayOf(schemaInt32()),
	})),
})

var factionSchema = object([]string{
	"description", "faction_id", "is_unique", "name", "size_factor", "station_count", "station_system_count",
}, map[string]any{
	"faction_id": schemaInt32(), "name": schemaString(), "description": schemaString(),
	"corporation_id": schemaInt32(), "militia_corporation_id": schemaInt32(),
	"solar_system_id": schemaInt32(), "size_factor": schemaFloat(), "station_count": schemaInt32(),
	"station_system_count": schemaInt32(), "is_unique": schemaBool(),
})

var idsSchema = func() map[string]any {
	entry := arrayOf(object([]string{"id", "name"}, map[string]any{"id": schemaInt32(), "name": schemaString()}))
	props := map[string]any{}
	for _, key := range idsKeys {
		props[key] = entry
	}
	return object(nil, props)
}()

var namedSchema = object([]string{"category", "id", "name"}, map[string]any{
	"category": schemaEnum("alliance", "character", "constellation", "corporation", "inventory_type",
		"region", "solar_system", "station", "faction"),
	"id": schemaInt64(), "name": schemaString(),
})

var errorSchema = object([]string{"error"}, map[string]any{"error": schemaString()})

// Parameters shared by many routes.
var (
	languageParamDoc = Param{Name: "language", In: "query",
		Description: "Language of names and descriptions: de, en (or en-us), es, fr, ja, ko, ru, zh",
		Schema:      schemaEnum(Languages...)}
	datasourceParamDoc = Param{Name: "datasource", In: "query", Description: "The server name you would like data from",
		Schema: map[string]any{"type": "string", "enum": []any{Datasource}, "default": Datasource}}
	pageParamDoc = Param{Name: "page", In: "query", Description: "Which page of results to return, from 1",
		Schema: map[string]any{"type": "integer", "format": "int32", "minimum": 1, "default": 1}}
)

func idParamDoc(name string) Param {
	return Param{Name: name, In: "path", Required: true, Description: "An EVE " + strings.ReplaceAll(name, "_", " "),
		Schema: map[string]any{"type": "integer", "format": "int64", "minimum": 1}}
}

// served reports whether route r answers under prefix at t, with the
// version it answers with.
func (s *server) served(r *Route, prefix string, at time.Time) (*Version, bool) {
	v, _, msg := r.resolve(prefix, at, s.d.DevEnabled)
	return v, msg == "" && v != nil
}

// versionPrefixes are the /vN/ prefixes of the table, ascending.
func (s *server) versionPrefixes() []string {
	var ns []int
	for _, r := range s.routes {
		for _, v := range r.Versions {
			if !slices.Contains(ns, v.N) {
				ns = append(ns, v.N)
			}
		}
	}
	slices.Sort(ns)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprintf("v%d", n)
	}
	return out
}
