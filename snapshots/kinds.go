package snapshots

import "fmt"

// Kind names one file of a snapshot.
type Kind string

// The kinds of records a snapshot holds. The eleven named kinds are the
// search categories; Roles and Documents serve the authenticated routes.
const (
	Agents         Kind = "agents"
	Alliances      Kind = "alliances"
	Characters     Kind = "characters"
	Constellations Kind = "constellations"
	Corporations   Kind = "corporations"
	Factions       Kind = "factions"
	Types          Kind = "types"
	Regions        Kind = "regions"
	SolarSystems   Kind = "solar_systems"
	Stations       Kind = "stations"
	Structures     Kind = "structures"
	Roles          Kind = "roles"
	Documents      Kind = "documents"
)

// Category is a search category, spelled as ESI spells it.
type Category string

// The search categories. Structure is only searchable on the authenticated
// character route.
const (
	CategoryAgent         Category = "agent"
	CategoryAlliance      Category = "alliance"
	CategoryCharacter     Category = "character"
	CategoryConstellation Category = "constellation"
	CategoryCorporation   Category = "corporation"
	CategoryFaction       Category = "faction"
	CategoryInventoryType Category = "inventory_type"
	CategoryRegion        Category = "region"
	CategorySolarSystem   Category = "solar_system"
	CategoryStation       Category = "station"
	CategoryStructure     Category = "structure"
)

// Categories lists every search category in ESI's order.
var Categories = []Category{
	CategoryAgent, CategoryAlliance, CategoryCharacter, CategoryConstellation,
	CategoryCorporation, CategoryFaction, CategoryInventoryType, CategoryRegion,
	CategorySolarSystem, CategoryStation, CategoryStructure,
}

// Kinds lists every kind in the order a snapshot is read and written.
var Kinds = []Kind{
	Agents, Alliances, Characters, Constellations, Corporations, Factions,
	Types, Regions, SolarSystems, Stations, Structures, Roles, Documents,
}

var categoryKinds = map[Category]Kind{
	CategoryAgent:         Agents,
	CategoryAlliance:      Alliances,
	CategoryCharacter:     Characters,
	CategoryConstellation: Constellations,
	CategoryCorporation:   Corporations,
	CategoryFaction:       Factions,
	CategoryInventoryType: Types,
	CategoryRegion:        Regions,
	CategorySolarSystem:   SolarSystems,
	CategoryStation:       Stations,
	CategoryStructure:     Structures,
}

// Kind returns the file kind that holds the category's names.
func (c Category) Kind() Kind { return categoryKinds[c] }

// Valid reports whether c is a known category.
func (c Category) Valid() bool { _, ok := categoryKinds[c]; return ok }

// ParseKind returns the kind spelled s.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown snapshot kind %q", s)
}

// New returns an empty record of the kind, ready to decode into.
func (k Kind) New() Record {
	switch k {
	case Agents:
		return new(Agent)
	case Alliances:
		return new(Alliance)
	case Characters:
		return new(Character)
	case Constellations:
		return new(Constellation)
	case Corporations:
		return new(Corporation)
	case Factions:
		return new(Faction)
	case Types:
		return new(Type)
	case Regions:
		return new(Region)
	case SolarSystems:
		return new(SolarSystem)
	case Stations:
		return new(Station)
	case Structures:
		return new(Structure)
	case Roles:
		return new(CharacterRoles)
	case Documents:
		return new(Document)
	}
	return nil
}

// Searchable reports whether the kind's records are names of a category.
func (k Kind) Searchable() bool {
	for _, kk := range categoryKinds {
		if kk == k {
			return true
		}
	}
	return false
}
