package indexer

import (
	"fmt"
	"strconv"
	"time"

	"gds/snapshots"
	"gds/snapshots/reinforce"
)

// FieldType says how an analysts' field is indexed, and so which queries
// and facets it answers.
type FieldType string

const (
	// Text fields are analysed names: terms, prefixes, wildcards, regexps.
	Text FieldType = "text"
	// Keyword fields hold exact values (IDs in decimal, states, tickers
	// case-folded): field:value, terms facets, sorting.
	Keyword FieldType = "keyword"
	// Numeric fields hold numbers: ranges (field:>=4, security:<0.45),
	// numeric range facets, sorting.
	Numeric FieldType = "numeric"
	// DateTime fields hold instants: ranges (field:>"2024-01-01"), date
	// range facets, sorting.
	DateTime FieldType = "datetime"
)

// AnalystField describes one field of the analysts' bleve documents.
type AnalystField struct {
	Name string    `json:"name"`
	Type FieldType `json:"type"`
	// Categories holds the categories whose documents have the field;
	// empty means every category.
	Categories []snapshots.Category `json:"categories,omitempty"`
	// Stored fields are returned by fields= (Generation.FieldValues),
	// and can be sorted and faceted on (bleve keeps their doc values).
	Stored  bool   `json:"stored"`
	About   string `json:"about"`
	Example string `json:"example"`
}

// Field indexes into AnalystFields of the attributes records carry.
const (
	attrCorporation = iota
	attrAlliance
	attrBirthday
	attrTicker
	attrMemberCount
	attrCEO
	attrSystem
	attrRegion
	attrConstellation
	attrType
	attrState
	attrReinforceWeekday
	attrReinforceHour
	attrPowerMode
	attrFuelExpires
	attrServicesOnline
	attrService
	attrGroup
	attrCategory
	attrMarketGroup
	attrPublished
	attrSecurity
	attrOwner
	attrLevel
	attrDivision
)

var (
	catChar   = []snapshots.Category{snapshots.CategoryCharacter}
	catCorp   = []snapshots.Category{snapshots.CategoryCorporation}
	catStruct = []snapshots.Category{snapshots.CategoryStructure}
	catType   = []snapshots.Category{snapshots.CategoryInventoryType}
	catSystem = []snapshots.Category{snapshots.CategorySolarSystem}
	catAgent  = []snapshots.Category{snapshots.CategoryAgent}
)

// attributeFields are the fields records' attributes fill, indexed by the
// attr constants above.
var attributeFields = []AnalystField{
	attrCorporation: {"corporation_id", Keyword, []snapshots.Category{snapshots.CategoryCharacter, snapshots.CategoryStructure, snapshots.CategoryAgent}, true,
		"the owning or employing corporation", "corporation_id:98000001"},
	attrAlliance:    {"alliance_id", Keyword, []snapshots.Category{snapshots.CategoryCharacter, snapshots.CategoryCorporation}, true, "the alliance, when in one", "alliance_id:99000001"},
	attrBirthday:    {"birthday", DateTime, catChar, true, "when the character was created", `birthday:>="2020-01-01"`},
	attrTicker:      {"ticker", Keyword, []snapshots.Category{snapshots.CategoryCorporation, snapshots.CategoryAlliance}, true, "the ticker, case-folded", "ticker:kari"},
	attrMemberCount: {"member_count", Numeric, catCorp, true, "members", "member_count:>=100"},
	attrCEO:         {"ceo_id", Keyword, catCorp, true, "the chief executive (a character)", "ceo_id:90000001"},
	attrSystem:      {"system_id", Keyword, []snapshots.Category{snapshots.CategoryStructure, snapshots.CategoryStation}, true, "the solar system", "system_id:30000142"},
	attrRegion: {"region_id", Keyword, []snapshots.Category{snapshots.CategoryStructure, snapshots.CategoryStation, snapshots.CategorySolarSystem, snapshots.CategoryConstellation}, true,
		"the region (derived from the system or constellation when the build indexes it)", "region_id:10000002"},
	attrConstellation:    {"constellation_id", Keyword, catSystem, true, "the constellation", "constellation_id:20000020"},
	attrType:             {"type_id", Keyword, []snapshots.Category{snapshots.CategoryStructure, snapshots.CategoryStation}, true, "the structure's or station's type", "type_id:35832"},
	attrState:            {"state", Keyword, catStruct, true, "the reinforcement state (shield_vulnerable, armor_reinforce, …)", "state:armor_reinforce"},
	attrReinforceWeekday: {"reinforce_weekday", Numeric, catStruct, true, "the weekday of the final reinforcement window, 0 Monday to 6 Sunday", "reinforce_weekday:6"},
	attrReinforceHour:    {"reinforce_hour", Numeric, catStruct, true, "the hour (UTC) of the reinforcement windows", "reinforce_hour:>=18"},
	attrPowerMode:        {"power_mode", Keyword, catStruct, true, "full_power when a service is online, else low_power", "power_mode:low_power"},
	attrFuelExpires:      {"fuel_expires", DateTime, catStruct, true, "when the fuel runs out", `fuel_expires:<"2026-12-01"`},
	attrServicesOnline:   {"services_online", Numeric, catStruct, true, "how many services are online", "services_online:0"},
	attrService:          {"service", Keyword, catStruct, true, "each online service's name", `service:"Clone Bay"`},
	attrGroup:            {"group_id", Keyword, catType, true, "the type's group", "group_id:18"},
	attrCategory:         {"category_id", Keyword, catType, true, "the category of the type's group (6 ships, 7 modules, 9 blueprints), when the snapshot has it", "category_id:6"},
	attrMarketGroup:      {"market_group_id", Keyword, catType, true, "the market group, when on the market", "market_group_id:1857"},
	attrPublished:        {"published", Keyword, catType, true, "true or false: whether the type is published", "published:false"},
	attrSecurity:         {"security", Numeric, catSystem, true, "the security status", "security:<0.45"},
	attrOwner:            {"owner", Keyword, []snapshots.Category{snapshots.CategoryStation}, true, "the owning corporation", "owner:1000035"},
	attrLevel:            {"level", Numeric, catAgent, true, "the agent's level, 1 to 5", "level:>=4"},
	attrDivision:         {"division_id", Keyword, catAgent, true, "the agent's division", "division_id:22"},
}

// nameFields are the fields every document has, from its name and ID.
func nameFields() []AnalystField {
	fs := []AnalystField{
		{Name: FieldName, Type: Text, About: "the whole name, case-folded, as one token", Example: "name:jita, name:kari*, name:*forge*"},
		{Name: FieldWords, Type: Text, About: "the name's words, case-folded (the default field)", Example: "words:navy, caldari +navy"},
		{Name: FieldID, Type: Keyword, About: "the ID in decimal (bleve's _id); sort=id orders by it as text", Example: "id:30000142"},
		{Name: FieldAccess, Type: Keyword, Categories: catStruct, About: "characters that may access the structure", Example: "access:90023332"},
	}
	for _, lang := range snapshots.Languages {
		if lang != "en" {
			fs = append(fs, AnalystField{Name: LocalizedField(lang), Type: Text, About: "the name in " + lang + ", whole, folded", Example: LocalizedField(lang) + ":…"})
		}
	}
	return fs
}

// AnalystFields lists every field of the analysts' documents: the name
// fields, then the attributes per category.
func AnalystFields() []AnalystField {
	return append(nameFields(), attributeFields...)
}

// attr is one attribute value of a record, as compact as the build keeps
// it for every record of a category: IDs, numbers and instants (Unix
// seconds) in num, strings in str.
type attr struct {
	field uint8
	num   float64
	str   string
}

// universe maps solar systems to constellations and constellations to
// regions, so documents carry the region their records do not name.
type universe struct {
	constellation map[int64]int64 // system → constellation
	region        map[int64]int64 // constellation → region
}

// universeKinds are the kinds universe is read from: a change to either
// makes every document with a derived field stale.
var universeKinds = []snapshots.Kind{snapshots.Constellations, snapshots.SolarSystems}

// derivesFromUniverse reports whether documents of cat carry fields
// derived from the universe kinds.
func derivesFromUniverse(cat snapshots.Category) bool {
	switch cat {
	case snapshots.CategoryStructure, snapshots.CategoryStation, snapshots.CategorySolarSystem:
		return true
	}
	return false
}

// readUniverse reads the universe kinds of snap (a few thousand records):
// each constellation's region and each system's constellation.
func readUniverse(snap *snapshots.Snapshot) (*universe, error) {
	u := &universe{constellation: map[int64]int64{}, region: map[int64]int64{}}
	for _, k := range []struct {
		kind   snapshots.Kind
		parent func(snapshots.Record) int64
		into   map[int64]int64
	}{
		{snapshots.Constellations, func(r snapshots.Record) int64 { return r.(*snapshots.Constellation).RegionID }, u.region},
		{snapshots.SolarSystems, func(r snapshots.Record) int64 { return r.(*snapshots.SolarSystem).ConstellationID }, u.constellation},
	} {
		if !snap.Has(k.kind) {
			continue
		}
		if err := snap.Each(k.kind, func(rec snapshots.Record, _ snapshots.Line) error {
			k.into[rec.Key()] = k.parent(rec)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (u *universe) regionOfSystem(system int64) int64 {
	if u == nil {
		return 0
	}
	return u.region[u.constellation[system]]
}

// attributes returns what rec's document holds besides its names: every
// value the fields table lists for its category, derived ones included.
// Absent values (a zero ID, no date) are left out.
func attributes(rec snapshots.Record, u *universe) []attr {
	var as []attr
	id := func(f uint8, v int64) {
		if v != 0 {
			as = append(as, attr{field: f, num: float64(v)})
		}
	}
	num := func(f uint8, v float64) { as = append(as, attr{field: f, num: v}) }
	when := func(f uint8, t *time.Time) {
		if t != nil {
			as = append(as, attr{field: f, num: float64(t.Unix())})
		}
	}
	str := func(f uint8, s string) {
		if s != "" {
			as = append(as, attr{field: f, str: s})
		}
	}
	switch r := rec.(type) {
	case *snapshots.Character:
		as = make([]attr, 0, 3)
		id(attrCorporation, r.CorporationID)
		id(attrAlliance, r.AllianceID)
		when(attrBirthday, r.Birthday)
	case *snapshots.Corporation:
		str(attrTicker, r.Ticker)
		id(attrAlliance, r.AllianceID)
		num(attrMemberCount, float64(r.MemberCount))
		id(attrCEO, r.CEOID)
	case *snapshots.Alliance:
		str(attrTicker, r.Ticker)
	case *snapshots.Structure:
		id(attrCorporation, r.CorporationID)
		id(attrSystem, r.SystemID)
		id(attrRegion, u.regionOfSystem(r.SystemID))
		id(attrType, r.TypeID)
		str(attrState, r.State)
		num(attrReinforceWeekday, float64(r.ReinforceWeekday))
		num(attrReinforceHour, float64(r.ReinforceHour))
		str(attrPowerMode, reinforce.PowerMode(r.Services).String())
		when(attrFuelExpires, r.FuelExpires)
		online := 0
		for _, s := range r.Services {
			if s.State == reinforce.ServiceOnline {
				online++
				str(attrService, s.Name)
			}
		}
		num(attrServicesOnline, float64(online))
	case *snapshots.Type:
		id(attrGroup, r.GroupID)
		id(attrCategory, r.CategoryID)
		if r.MarketGroupID != nil {
			id(attrMarketGroup, *r.MarketGroupID)
		}
		str(attrPublished, strconv.FormatBool(r.Published))
	case *snapshots.SolarSystem:
		id(attrConstellation, r.ConstellationID)
		if u != nil {
			id(attrRegion, u.region[r.ConstellationID])
		}
		num(attrSecurity, r.SecurityStatus)
	case *snapshots.Constellation:
		id(attrRegion, r.RegionID)
	case *snapshots.Station:
		id(attrSystem, r.SystemID)
		id(attrRegion, u.regionOfSystem(r.SystemID))
		id(attrType, r.TypeID)
		id(attrOwner, r.Owner)
	case *snapshots.Agent:
		id(attrCorporation, r.CorporationID)
		if r.Level != 0 {
			num(attrLevel, float64(r.Level))
		}
		id(attrDivision, r.DivisionID)
	}
	return as
}

// FieldsVersion numbers the layout of the analysts' documents: a
// generation of another layout is never patched or reused, only rebuilt,
// even from the snapshot it was built from (its bleve mapping lacks the
// new fields). 2 added category_id to types; 3 the value columns beside
// the tables (columns.go); 4 indexed instants at DateShifts only and
// stores no attribute (its queries read generations of 3 alike); 5 leaves
// characters out of bleve (TablesOnly), keeps their ID keywords in value
// columns and the name fields' term vectors, which phrases need (its
// queries read older generations alike).
const FieldsVersion = 5

// FieldsVersions are the layout of the analysts' documents a build writes
// and the layouts of generations this code answers from (every one up to
// its own: misread), for `gds version`.
func FieldsVersions() (writes string, reads []string) {
	for v := 1; v <= FieldsVersion; v++ {
		reads = append(reads, strconv.Itoa(v))
	}
	return strconv.Itoa(FieldsVersion), reads
}

// prepareFields reads the universe for derived fields and makes a build
// from a generation of another fields layout a full one (the Manager
// already has, before it compares snapshots).
func (b *builder) prepareFields() error {
	u, err := readUniverse(b.snap)
	if err != nil {
		return fmt.Errorf("reading the universe for derived fields: %w", err)
	}
	b.universe = u
	b.meta.Fields = FieldsVersion
	if b.prev != nil && b.prev.Meta.Fields != FieldsVersion {
		b.full = true
	}
	return nil
}

// derivedStale reports whether the previous generation's documents of cat
// hold fields derived from universe kinds that have changed since, so none
// of them can be reused or patched.
func (b *builder) derivedStale(cat snapshots.Category) bool {
	if b.prev == nil || !derivesFromUniverse(cat) {
		return false
	}
	for _, k := range universeKinds {
		if b.prev.Meta.Files[k] != b.snap.Manifest.Files[k].SHA256 {
			return true
		}
	}
	return false
}
