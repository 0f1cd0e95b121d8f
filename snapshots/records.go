package snapshots

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Languages are the localizations the service knows, in ESI's spelling.
// "en" is the default; every localized map may hold any subset of them.
var Languages = []string{"en", "de", "fr", "ja", "ru", "zh", "ko", "es"}

// IsLanguage reports whether lang is one of Languages.
func IsLanguage(lang string) bool {
	for _, l := range Languages {
		if l == lang {
			return true
		}
	}
	return false
}

// Localized maps a language code to a text in that language.
type Localized map[string]string

func (l Localized) validate(field string) error {
	for lang, s := range l {
		if !IsLanguage(lang) {
			return fmt.Errorf("%s: unknown language %q", field, lang)
		}
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("%s.%s: empty", field, lang)
		}
	}
	return nil
}

// Record is what every snapshot file holds: one JSON object per line, each
// with a positive key, in strictly ascending key order (so duplicates and
// disorder are caught while streaming, and two snapshots diff by merge).
type Record interface {
	Key() int64
	Validate() error
}

// Named is a record that can be searched by name: every search category's
// file holds Named records.
type Named interface {
	Record
	DisplayName() string
	// LocalizedNames returns the names per language, or nil when the record
	// has only its single name.
	LocalizedNames() Localized
}

// Entity holds the fields every named record shares.
type Entity struct {
	ID    int64     `json:"id"`
	Name  string    `json:"name"`
	Names Localized `json:"names,omitempty"`
}

func (e *Entity) Key() int64                { return e.ID }
func (e *Entity) DisplayName() string       { return e.Name }
func (e *Entity) LocalizedNames() Localized { return e.Names }

func (e *Entity) validate() error {
	if err := positive("id", e.ID); err != nil {
		return err
	}
	if strings.TrimSpace(e.Name) == "" {
		return fmt.Errorf("name: missing or empty")
	}
	return e.Names.validate("names")
}

// positive checks an ID field: nil when v is positive.
func positive(field string, v int64) error {
	if v <= 0 {
		return fmt.Errorf("%s: must be a positive integer, got %d", field, v)
	}
	return nil
}

// within checks a field of a range (a weekday, an hour): nil when v is
// lo to hi.
func within(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s: must be %d to %d, got %d", field, lo, hi, v)
	}
	return nil
}

// Agent is an NPC character that gives out missions (category agent).
type Agent struct {
	Entity
	CorporationID int64 `json:"corporation_id,omitempty"`
	LocationID    int64 `json:"location_id,omitempty"`
	AgentTypeID   int64 `json:"agent_type_id,omitempty"`
	DivisionID    int64 `json:"division_id,omitempty"`
	Level         int   `json:"level,omitempty"`
	IsLocator     bool  `json:"is_locator,omitempty"`
}

func (r *Agent) Validate() error { return r.validate() }

// Alliance is a player alliance (category alliance).
type Alliance struct {
	Entity
	Ticker                string     `json:"ticker"`
	CreatorID             int64      `json:"creator_id,omitempty"`
	CreatorCorporationID  int64      `json:"creator_corporation_id,omitempty"`
	ExecutorCorporationID int64      `json:"executor_corporation_id,omitempty"`
	DateFounded           *time.Time `json:"date_founded,omitempty"`
	FactionID             int64      `json:"faction_id,omitempty"`
}

func (r *Alliance) Validate() error {
	if err := r.validate(); err != nil {
		return err
	}
	if r.Ticker == "" {
		return fmt.Errorf("ticker: missing")
	}
	return nil
}

// Character is a player character (category character).
type Character struct {
	Entity
	CorporationID  int64      `json:"corporation_id"`
	AllianceID     int64      `json:"alliance_id,omitempty"`
	Birthday       *time.Time `json:"birthday,omitempty"`
	Gender         string     `json:"gender,omitempty"`
	RaceID         int64      `json:"race_id,omitempty"`
	BloodlineID    int64      `json:"bloodline_id,omitempty"`
	AncestryID     int64      `json:"ancestry_id,omitempty"`
	SecurityStatus *float64   `json:"security_status,omitempty"`
	Description    string     `json:"description,omitempty"`
	Title          string     `json:"title,omitempty"`
	FactionID      int64      `json:"faction_id,omitempty"`
}

func (r *Character) Validate() error {
	if err := cmp.Or(r.validate(), positive("corporation_id", r.CorporationID)); err != nil {
		return err
	}
	if r.Gender != "" && r.Gender != "male" && r.Gender != "female" {
		return fmt.Errorf("gender: must be male or female, got %q", r.Gender)
	}
	return nil
}

// Constellation groups solar systems (category constellation).
type Constellation struct {
	Entity
	RegionID int64   `json:"region_id"`
	Systems  []int64 `json:"systems,omitempty"`
	// Position is the constellation's centre (absent in snapshots
	// written before it was recorded).
	Position *Position `json:"position,omitempty"`
}

func (r *Constellation) Validate() error { return r.validate() }

// Corporation is an NPC or player corporation (category corporation).
type Corporation struct {
	Entity
	Ticker        string     `json:"ticker"`
	MemberCount   int64      `json:"member_count"`
	CEOID         int64      `json:"ceo_id,omitempty"`
	CreatorID     int64      `json:"creator_id,omitempty"`
	AllianceID    int64      `json:"alliance_id,omitempty"`
	FactionID     int64      `json:"faction_id,omitempty"`
	HomeStationID int64      `json:"home_station_id,omitempty"`
	TaxRate       float64    `json:"tax_rate"`
	Shares        *int64     `json:"shares,omitempty"`
	DateFounded   *time.Time `json:"date_founded,omitempty"`
	Description   string     `json:"description,omitempty"`
	Descriptions  Localized  `json:"descriptions,omitempty"`
	URL           string     `json:"url,omitempty"`
	WarEligible   *bool      `json:"war_eligible,omitempty"`
	NPC           bool       `json:"npc,omitempty"`
}

func (r *Corporation) Validate() error {
	if err := r.validate(); err != nil {
		return err
	}
	if r.TaxRate < 0 || r.TaxRate > 1 {
		return fmt.Errorf("tax_rate: must be between 0 and 1, got %v", r.TaxRate)
	}
	return r.Descriptions.validate("descriptions")
}

// Faction is an NPC faction (category faction).
type Faction struct {
	Entity
	Description  string    `json:"description"`
	Descriptions Localized `json:"descriptions,omitempty"`
	FactionDetails
}

// FactionDetails are a faction's figures, in the record and in ESI's
// faction answer alike (api embeds them).
type FactionDetails struct {
	CorporationID        int64   `json:"corporation_id,omitempty"`
	MilitiaCorporationID int64   `json:"militia_corporation_id,omitempty"`
	SolarSystemID        int64   `json:"solar_system_id,omitempty"`
	SizeFactor           float64 `json:"size_factor"`
	StationCount         int64   `json:"station_count"`
	StationSystemCount   int64   `json:"station_system_count"`
	IsUnique             bool    `json:"is_unique"`
}

func (r *Faction) Validate() error {
	if err := r.validate(); err != nil {
		return err
	}
	return r.Descriptions.validate("descriptions")
}

// Region is a region of space (category region).
type Region struct {
	Entity
	Description    string  `json:"description,omitempty"`
	Constellations []int64 `json:"constellations,omitempty"`
}

func (r *Region) Validate() error { return r.validate() }

// Position is a point in space, in metres.
type Position struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// SolarSystem is a solar system (category solar_system).
type SolarSystem struct {
	Entity
	ConstellationID int64     `json:"constellation_id"`
	SecurityStatus  float64   `json:"security_status"`
	SecurityClass   string    `json:"security_class,omitempty"`
	StarID          int64     `json:"star_id,omitempty"`
	Position        *Position `json:"position,omitempty"`
	Stations        []int64   `json:"stations,omitempty"`
	// Planets and Stargates are absent in snapshots written before they
	// were recorded.
	Planets   []Planet `json:"planets,omitempty"`
	Stargates []int64  `json:"stargates,omitempty"`
}

// Planet is a planet of a solar system with its moons and asteroid belts,
// as ESI lists them.
type Planet struct {
	PlanetID      int64   `json:"planet_id"`
	Moons         []int64 `json:"moons,omitempty"`
	AsteroidBelts []int64 `json:"asteroid_belts,omitempty"`
}

func (r *SolarSystem) Validate() error {
	if err := cmp.Or(r.validate(), positive("constellation_id", r.ConstellationID)); err != nil {
		return err
	}
	for i, p := range r.Planets {
		if err := positive("planet_id", p.PlanetID); err != nil {
			return fmt.Errorf("planets[%d].%w", i, err)
		}
	}
	return nil
}

// Station is an NPC station (category station); player structures are not
// stations.
type Station struct {
	Entity
	StationDetails
	Services []string `json:"services,omitempty"`
}

// StationDetails are a station's figures, in the record and in ESI's
// station answer alike (api embeds them).
type StationDetails struct {
	SystemID                 int64     `json:"system_id"`
	TypeID                   int64     `json:"type_id"`
	Owner                    int64     `json:"owner,omitempty"`
	RaceID                   int64     `json:"race_id,omitempty"`
	Position                 *Position `json:"position,omitempty"`
	ReprocessingEfficiency   float64   `json:"reprocessing_efficiency"`
	ReprocessingStationsTake float64   `json:"reprocessing_stations_take"`
	MaxDockableShipVolume    float64   `json:"max_dockable_ship_volume"`
	OfficeRentalCost         float64   `json:"office_rental_cost"`
}

func (r *Station) Validate() error {
	return cmp.Or(r.validate(), positive("system_id", r.SystemID), positive("type_id", r.TypeID))
}

// DogmaAttribute is one dogma attribute value of a type.
type DogmaAttribute struct {
	AttributeID int64   `json:"attribute_id"`
	Value       float64 `json:"value"`
}

// DogmaEffect is one dogma effect of a type.
type DogmaEffect struct {
	EffectID  int64 `json:"effect_id"`
	IsDefault bool  `json:"is_default"`
}

// Type is an inventory type (category inventory_type): every field of the
// type record (docs/api.md, Lookups and bulk resolution). Optional numbers are pointers so "unknown" and 0 stay distinct.
// CategoryID (the group's category, ships are 6; 0 when unknown) is for the
// analysts' index only: ESI's type answer has no category.
type Type struct {
	Entity
	Description  string    `json:"description"`
	Descriptions Localized `json:"descriptions,omitempty"`
	Published    bool      `json:"published"`
	GroupID      int64     `json:"group_id"`
	CategoryID   int64     `json:"category_id,omitempty"`
	TypeDetails
	DogmaAttributes []DogmaAttribute `json:"dogma_attributes,omitempty"`
	DogmaEffects    []DogmaEffect    `json:"dogma_effects,omitempty"`
}

// TypeDetails are a type's optional figures, in the record, in ESI's type
// answer (api embeds them) and in the SDE's types.yaml (sde decodes them)
// alike (the importer reads no packaged volume): pointers, so that
// "unknown" and 0 stay distinct.
type TypeDetails struct {
	MarketGroupID  *int64   `json:"market_group_id,omitempty" yaml:"marketGroupID"`
	Radius         *float64 `json:"radius,omitempty" yaml:"radius"`
	Volume         *float64 `json:"volume,omitempty" yaml:"volume"`
	PackagedVolume *float64 `json:"packaged_volume,omitempty" yaml:"-"`
	Capacity       *float64 `json:"capacity,omitempty" yaml:"capacity"`
	PortionSize    *int64   `json:"portion_size,omitempty" yaml:"portionSize"`
	Mass           *float64 `json:"mass,omitempty" yaml:"mass"`
	GraphicID      *int64   `json:"graphic_id,omitempty" yaml:"graphicID"`
	IconID         *int64   `json:"icon_id,omitempty" yaml:"iconID"`
}

func (r *Type) Validate() error {
	if err := cmp.Or(r.validate(), positive("group_id", r.GroupID)); err != nil {
		return err
	}
	if r.CategoryID < 0 {
		return fmt.Errorf("category_id: must be a positive integer when present, got %d", r.CategoryID)
	}
	return r.Descriptions.validate("descriptions")
}

// Window is one hour of the old (v1) weekly vulnerability schedule.
type Window struct {
	Day  int `json:"day"`
	Hour int `json:"hour"`
}

// Validate checks the ranges ESI accepts: day 0 (Monday) to 6, hour 0 to 23.
func (w Window) Validate() error {
	return cmp.Or(within("day", w.Day, 0, 6), within("hour", w.Hour, 0, 23))
}

// Service is a structure service and whether it is online.
type Service struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// StructureStates are the states a structure may be in.
var StructureStates = []string{
	"anchor_vulnerable", "anchoring", "armor_reinforce", "armor_vulnerable",
	"deploy_vulnerable", "fitting_invulnerable", "hull_reinforce", "hull_vulnerable",
	"online_deprecated", "onlining_vulnerable", "shield_vulnerable", "unanchored", "unknown",
}

// Structure is a player-owned structure (category structure) with both the
// v2 fields and the old v1 vulnerability windows, its name and the
// characters that may access it.
type Structure struct {
	ID                   int64      `json:"id"`
	Name                 string     `json:"name"`
	TypeID               int64      `json:"type_id"`
	CorporationID        int64      `json:"corporation_id"`
	SystemID             int64      `json:"system_id"`
	ProfileID            int64      `json:"profile_id"`
	State                string     `json:"state"`
	ReinforceWeekday     int        `json:"reinforce_weekday"`
	ReinforceHour        int        `json:"reinforce_hour"`
	Services             []Service  `json:"services,omitempty"`
	NextReinforceWeekday *int       `json:"next_reinforce_weekday,omitempty"`
	NextReinforceHour    *int       `json:"next_reinforce_hour,omitempty"`
	NextReinforceApply   *time.Time `json:"next_reinforce_apply,omitempty"`
	CurrentVul           []Window   `json:"current_vul"`
	NextVul              []Window   `json:"next_vul"`
	FuelExpires          *time.Time `json:"fuel_expires,omitempty"`
	StateTimerStart      *time.Time `json:"state_timer_start,omitempty"`
	StateTimerEnd        *time.Time `json:"state_timer_end,omitempty"`
	UnanchorsAt          *time.Time `json:"unanchors_at,omitempty"`
	Access               []int64    `json:"access,omitempty"`
}

func (r *Structure) Key() int64                { return r.ID }
func (r *Structure) DisplayName() string       { return r.Name }
func (r *Structure) LocalizedNames() Localized { return nil }

func (r *Structure) Validate() error {
	if err := positive("id", r.ID); err != nil {
		return err
	}
	if strings.TrimSpace(r.Name) == "" {
		return fmt.Errorf("name: missing or empty")
	}
	if r.TypeID <= 0 || r.CorporationID <= 0 || r.SystemID <= 0 {
		return fmt.Errorf("type_id, corporation_id and system_id must be positive integers")
	}
	if !knownState(r.State) {
		return fmt.Errorf("state: unknown structure state %q", r.State)
	}
	if err := cmp.Or(within("reinforce_weekday", r.ReinforceWeekday, 0, 6), within("reinforce_hour", r.ReinforceHour, 0, 23)); err != nil {
		return err
	}
	for i, s := range r.Services {
		if s.Name == "" {
			return fmt.Errorf("services[%d].name: missing", i)
		}
		if s.State != "online" && s.State != "offline" && s.State != "cleanup" {
			return fmt.Errorf("services[%d].state: must be online, offline or cleanup, got %q", i, s.State)
		}
	}
	// The three next_reinforce_* fields come together or not at all.
	n := 0
	if r.NextReinforceWeekday != nil {
		n++
		if err := within("next_reinforce_weekday", *r.NextReinforceWeekday, 0, 6); err != nil {
			return err
		}
	}
	if r.NextReinforceHour != nil {
		n++
		if err := within("next_reinforce_hour", *r.NextReinforceHour, 0, 23); err != nil {
			return err
		}
	}
	if r.NextReinforceApply != nil {
		n++
	}
	if n != 0 && n != 3 {
		return fmt.Errorf("next_reinforce_weekday, next_reinforce_hour and next_reinforce_apply must be given together")
	}
	for i, w := range r.CurrentVul {
		if err := w.Validate(); err != nil {
			return fmt.Errorf("current_vul[%d].%w", i, err)
		}
	}
	for i, w := range r.NextVul {
		if err := w.Validate(); err != nil {
			return fmt.Errorf("next_vul[%d].%w", i, err)
		}
	}
	for i, c := range r.Access {
		if c <= 0 {
			return fmt.Errorf("access[%d]: must be a positive character id, got %d", i, c)
		}
	}
	return nil
}

func knownState(s string) bool {
	for _, k := range StructureStates {
		if k == s {
			return true
		}
	}
	return false
}

// RoleStationManager is the corporation role that may read structures.
const RoleStationManager = "Station_Manager"

// CharacterRoles lists the corporation roles one character holds.
type CharacterRoles struct {
	CharacterID   int64    `json:"character_id"`
	CorporationID int64    `json:"corporation_id"`
	Roles         []string `json:"roles"`
}

func (r *CharacterRoles) Key() int64 { return r.CharacterID }

func (r *CharacterRoles) Validate() error {
	if err := cmp.Or(positive("character_id", r.CharacterID), positive("corporation_id", r.CorporationID)); err != nil {
		return err
	}
	for i, role := range r.Roles {
		if role == "" {
			return fmt.Errorf("roles[%d]: empty", i)
		}
	}
	return nil
}

// Has reports whether the character holds role.
func (r *CharacterRoles) Has(role string) bool {
	for _, x := range r.Roles {
		if x == role {
			return true
		}
	}
	return false
}

// Document is an opaque JSON answer for one concrete path of the routes of
// docs/api.md, Character and corporation documents, e.g. "/characters/90000001/bookmarks/". Documents are keyed by a
// running number (Seq) so the file obeys the same ascending-key rule as the
// others; lookups go by Path.
type Document struct {
	Seq  int64           `json:"seq"`
	Path string          `json:"path"`
	Body json.RawMessage `json:"body"`
}

func (r *Document) Key() int64 { return r.Seq }

func (r *Document) Validate() error {
	if err := positive("seq", r.Seq); err != nil {
		return err
	}
	if !strings.HasPrefix(r.Path, "/") || !strings.HasSuffix(r.Path, "/") {
		return fmt.Errorf("path: must start and end with '/', got %q", r.Path)
	}
	if len(r.Body) == 0 || !json.Valid(r.Body) {
		return fmt.Errorf("body: missing or not valid JSON")
	}
	return nil
}
