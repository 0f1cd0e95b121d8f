package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"gds/query"
	"gds/snapshots"
)

// lookupRoutes resolve the IDs a search returns (docs/api.md, Lookups and
// bulk resolution), in ESI's
// shapes, from the live generation's records.
func (s *server) lookupRoutes() []Route {
	lc := s.lifecycles().Current
	var out []Route
	for _, l := range s.lookups() {
		out = append(out, Route{
			Method:    http.MethodGet,
			Path:      l.path,
			Summary:   l.summary,
			Tags:      []string{l.tag},
			RateLimit: RateGroupStaticData,
			Doc:       Doc{Params: []Param{idParamDoc(l.param), languageParamDoc, datasourceParamDoc}, Response: l.schema},
			Versions:  []Version{{N: l.version, Handler: s.lookupHandler(l), Lifecycle: lc}},
		})
	}
	return append(out,
		Route{
			Method: http.MethodGet, Path: "/universe/factions/", Summary: "Get factions",
			Tags: []string{"Universe"}, RateLimit: RateGroupStaticData,
			Doc:      Doc{Params: []Param{languageParamDoc, datasourceParamDoc}, Response: arrayOf(factionSchema)},
			Versions: []Version{{N: 2, Handler: s.factions, Lifecycle: lc}},
		},
		Route{
			Method: http.MethodPost, Path: "/universe/ids/", Summary: "Bulk names to IDs",
			Tags: []string{"Universe"}, RateLimit: RateGroupStaticData,
			Doc: Doc{Params: []Param{languageParamDoc, datasourceParamDoc, {
				Name: "names", In: "body", Required: true,
				Description: fmt.Sprintf("1 to %d distinct names of 1 to %d characters, matched exactly and ignoring case", maxBulkNames, maxNameLength),
				Schema:      uniqueItems(schemaArray(map[string]any{"type": "string", "minLength": 1, "maxLength": maxNameLength}, 1, maxBulkNames)),
			}}, Response: idsSchema},
			Versions: []Version{{N: 1, Handler: s.universeIDs, Lifecycle: lc}},
		},
		Route{
			Method: http.MethodPost, Path: "/universe/names/", Summary: "Get names and categories for a set of IDs",
			Tags: []string{"Universe"}, RateLimit: RateGroupStaticData,
			Doc: Doc{Params: []Param{languageParamDoc, datasourceParamDoc, {
				Name: "ids", In: "body", Required: true,
				Description: fmt.Sprintf("1 to %d unique positive 32-bit IDs", maxBulkIDs),
				Schema:      uniqueItems(schemaArray(schemaInt32(), 1, maxBulkIDs)),
			}}, Response: arrayOf(namedSchema)},
			Versions: []Version{{N: 3, Handler: s.universeNames, Lifecycle: lc}},
		},
	)
}

// lookup is one single-record lookup route: where its record lives and
// how ESI shapes it.
type lookup struct {
	path, param, summary, tag string
	version                   int
	// kinds are tried in order; ESI treats agents as characters.
	kinds    []snapshots.Kind
	notFound string
	render   func(rec snapshots.Record, lang string) any
	schema   map[string]any
}

func (s *server) lookups() []lookup {
	corporation := lookup{
		param: "corporation_id", summary: "Get corporation information", tag: "Corporation",
		version: 5, kinds: []snapshots.Kind{snapshots.Corporations}, notFound: "Corporation not found",
		render: renderCorporation, schema: corporationSchema,
	}
	// The interface spells the corporation lookup /corporation/; ESI
	// spells it /corporations/. Both answer.
	corporations := corporation
	corporation.path = "/corporation/{corporation_id}/"
	corporations.path = "/corporations/{corporation_id}/"
	return []lookup{
		{path: "/universe/types/{type_id}/", param: "type_id", summary: "Get type information", tag: "Universe",
			version: 3, kinds: []snapshots.Kind{snapshots.Types}, notFound: "Type not found",
			render: renderType, schema: typeSchema},
		{path: "/characters/{character_id}/", param: "character_id", summary: "Get character's public information", tag: "Character",
			version: 5, kinds: []snapshots.Kind{snapshots.Characters, snapshots.Agents}, notFound: "Character not found",
			render: renderCharacter, schema: characterSchema},
		corporations,
		corporation,
		{path: "/universe/stations/{station_id}/", param: "station_id", summary: "Get station information", tag: "Universe",
			version: 2, kinds: []snapshots.Kind{snapshots.Stations}, notFound: "Station not found",
			render: renderStation, schema: stationSchema},
		{path: "/alliances/{alliance_id}/", param: "alliance_id", summary: "Get alliance information", tag: "Alliance",
			version: 4, kinds: []snapshots.Kind{snapshots.Alliances}, notFound: "Alliance not found",
			render: renderAlliance, schema: allianceSchema},
		{path: "/universe/regions/{region_id}/", param: "region_id", summary: "Get region information", tag: "Universe",
			version: 1, kinds: []snapshots.Kind{snapshots.Regions}, notFound: "Region not found",
			render: renderRegion, schema: regionSchema},
		{path: "/universe/constellations/{constellation_id}/", param: "constellation_id", summary: "Get constellation information", tag: "Universe",
			version: 1, kinds: []snapshots.Kind{snapshots.Constellations}, notFound: "Constellation not found",
			render: renderConstellation, schema: constellationSchema},
		{path: "/universe/systems/{system_id}/", param: "system_id", summary: "Get solar system information", tag: "Universe",
			version: 4, kinds: []snapshots.Kind{snapshots.SolarSystems}, notFound: "Solar system not found",
			render: renderSystem, schema: systemSchema},
	}
}

// lookupHandler answers one record in ESI's shape, 404 when unknown.
func (s *server) lookupHandler(l lookup) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := parseID(c, l.param)
		if !ok {
			return
		}
		lang, ok := parseLocalized(c)
		if !ok {
			return
		}
		s.read(c, func(r Reader) {
			for _, kind := range l.kinds {
				rec, err := r.Record(kind, id)
				if errors.Is(err, query.ErrNotFound) {
					continue
				}
				if err != nil {
					s.internalError(c, err)
					return
				}
				// Validators only for what exists: an unknown ID is a
				// 404, never a 304.
				if s.revalidate(c, r, false, lang) {
					return
				}
				c.JSON(http.StatusOK, l.render(rec, lang))
				return
			}
			writeError(c, http.StatusNotFound, l.notFound)
		})
	}
}

// revalidate sets the cache headers of a GET answer that depends only on
// the view's generation, the route version, the path and variant (the
// language, the page...), and answers 304 when the client's copy is
// current. Authenticated routes call it after authorizing, with private.
func (s *server) revalidate(c *gin.Context, v Reader, private bool, variant string) bool {
	info := v.Info()
	etag := etagOf(info.ID, VersionLabel(c)+" "+c.Request.URL.Path+" "+variant)
	setCacheHeaders(c, private, s.now(), info.Created, etag)
	if notModified(c.Request, etag) {
		c.AbortWithStatus(http.StatusNotModified)
		return true
	}
	return false
}

// internalError logs what went wrong and tells the client only that it did.
func (s *server) internalError(c *gin.Context, err error) {
	s.d.Logger.Error().Err(err).Str("path", c.Request.URL.Path).Msg("request failed")
	writeError(c, http.StatusInternalServerError, "Internal error")
}

// localized picks lang's text, the default text otherwise.
func localized(def string, l snapshots.Localized, lang string) string {
	if t, ok := l[lang]; ok {
		return t
	}
	return def
}

type typeResponse struct {
	TypeID      int64  `json:"type_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Published   bool   `json:"published"`
	GroupID     int64  `json:"group_id"`
	snapshots.TypeDetails
	DogmaAttributes []snapshots.DogmaAttribute `json:"dogma_attributes,omitempty" schema:"maxItems=1000"`
	DogmaEffects    []snapshots.DogmaEffect    `json:"dogma_effects,omitempty" schema:"maxItems=1000"`
}

func renderType(rec snapshots.Record, lang string) any {
	t := rec.(*snapshots.Type)
	return typeResponse{
		TypeID: t.ID, Name: localized(t.Name, t.Names, lang),
		Description: localized(t.Description, t.Descriptions, lang),
		Published:   t.Published, GroupID: t.GroupID, TypeDetails: t.TypeDetails,
		DogmaAttributes: t.DogmaAttributes, DogmaEffects: t.DogmaEffects,
	}
}

type characterResponse struct {
	Name           string     `json:"name"`
	CorporationID  int64      `json:"corporation_id"`
	AllianceID     int64      `json:"alliance_id,omitempty"`
	FactionID      int64      `json:"faction_id,omitempty"`
	Birthday       *time.Time `json:"birthday,omitempty"`
	Gender         string     `json:"gender,omitempty" schema:"enum=female|male"`
	RaceID         int64      `json:"race_id,omitempty"`
	BloodlineID    int64      `json:"bloodline_id,omitempty"`
	AncestryID     int64      `json:"ancestry_id,omitempty"`
	SecurityStatus *float64   `json:"security_status,omitempty" schema:"min=-10,max=10"`
	Description    string     `json:"description,omitempty"`
	Title          string     `json:"title,omitempty"`
}

// renderCharacter answers players and agents alike: ESI resolves an agent
// ID on the character route with the agent's name and corporation.
func renderCharacter(rec snapshots.Record, lang string) any {
	switch r := rec.(type) {
	case *snapshots.Agent:
		return characterResponse{Name: localized(r.Name, r.Names, lang), CorporationID: r.CorporationID}
	case *snapshots.Character:
		return characterResponse{
			Name: localized(r.Name, r.Names, lang), CorporationID: r.CorporationID, AllianceID: r.AllianceID,
			FactionID: r.FactionID, Birthday: r.Birthday, Gender: r.Gender, RaceID: r.RaceID,
			BloodlineID: r.BloodlineID, AncestryID: r.AncestryID, SecurityStatus: r.SecurityStatus,
			Description: r.Description, Title: r.Title,
		}
	}
	panic(fmt.Sprintf("renderCharacter: unexpected record %T", rec))
}

type corporationResponse struct {
	Name          string     `json:"name"`
	Ticker        string     `json:"ticker"`
	MemberCount   int64      `json:"member_count"`
	CEOID         int64      `json:"ceo_id,omitempty"`
	CreatorID     int64      `json:"creator_id,omitempty"`
	AllianceID    int64      `json:"alliance_id,omitempty"`
	FactionID     int64      `json:"faction_id,omitempty"`
	HomeStationID int64      `json:"home_station_id,omitempty"`
	TaxRate       float64    `json:"tax_rate" schema:"min=0,max=1"`
	Shares        *int64     `json:"shares,omitempty"`
	DateFounded   *time.Time `json:"date_founded,omitempty"`
	Description   string     `json:"description,omitempty"`
	URL           string     `json:"url,omitempty"`
	WarEligible   *bool      `json:"war_eligible,omitempty"`
}

// eveSystem is character 1, "EVE System": the creator ESI names for NPC
// corporations (and their CEO where they have none). Snapshots imported
// before the SDE importer recorded it lack it.
const eveSystem = 1

func renderCorporation(rec snapshots.Record, lang string) any {
	r := rec.(*snapshots.Corporation)
	ceo, creator := r.CEOID, r.CreatorID
	if r.NPC {
		ceo, creator = cmp.Or(ceo, eveSystem), cmp.Or(creator, eveSystem)
	}
	return corporationResponse{
		Name: localized(r.Name, r.Names, lang), Ticker: r.Ticker, MemberCount: r.MemberCount,
		CEOID: ceo, CreatorID: creator, AllianceID: r.AllianceID, FactionID: r.FactionID, Shares: r.Shares,
		HomeStationID: r.HomeStationID, TaxRate: r.TaxRate, DateFounded: r.DateFounded,
		Description: localized(r.Description, r.Descriptions, lang), URL: r.URL, WarEligible: r.WarEligible,
	}
}

type stationResponse struct {
	StationID int64  `json:"station_id"`
	Name      string `json:"name"`
	snapshots.StationDetails
	Services []string `json:"services" schema:"maxItems=30"`
}

func renderStation(rec snapshots.Record, lang string) any {
	r := rec.(*snapshots.Station)
	return stationResponse{
		StationID: r.ID, Name: localized(r.Name, r.Names, lang), StationDetails: r.StationDetails,
		Services: nonNil(r.Services),
	}
}

type allianceResponse struct {
	Name                  string     `json:"name"`
	Ticker                string     `json:"ticker"`
	CreatorID             int64      `json:"creator_id,omitempty"`
	CreatorCorporationID  int64      `json:"creator_corporation_id,omitempty"`
	ExecutorCorporationID int64      `json:"executor_corporation_id,omitempty"`
	DateFounded           *time.Time `json:"date_founded,omitempty"`
	FactionID             int64      `json:"faction_id,omitempty"`
}

func renderAlliance(rec snapshots.Record, lang string) any {
	r := rec.(*snapshots.Alliance)
	return allianceResponse{
		Name: localized(r.Name, r.Names, lang), Ticker: r.Ticker, CreatorID: r.CreatorID,
		CreatorCorporationID: r.CreatorCorporationID, ExecutorCorporationID: r.ExecutorCorporationID,
		DateFounded: r.DateFounded, FactionID: r.FactionID,
	}
}

type regionResponse struct {
	RegionID       int64   `json:"region_id"`
	Name           string  `json:"name"`
	Description    string  `json:"description,omitempty"`
	Constellations []int64 `json:"constellations"`
}

func renderRegion(rec snapshots.Record, lang string) any {
	r := rec.(*snapshots.Region)
	return regionResponse{RegionID: r.ID, Name: localized(r.Name, r.Names, lang), Description: r.Description,
		Constellations: nonNil(r.Constellations)}
}

type constellationResponse struct {
	ConstellationID int64               `json:"constellation_id"`
	Name            string              `json:"name"`
	Position        *snapshots.Position `json:"position,omitempty"`
	RegionID        int64               `json:"region_id"`
	Systems         []int64             `json:"systems"`
}

func renderConstellation(rec snapshots.Record, lang string) any {
	r := rec.(*snapshots.Constellation)
	return constellationResponse{ConstellationID: r.ID, Name: localized(r.Name, r.Names, lang),
		Position: r.Position, RegionID: r.RegionID, Systems: nonNil(r.Systems)}
}

type systemResponse struct {
	SystemID        int64               `json:"system_id"`
	Name            string              `json:"name"`
	ConstellationID int64               `json:"constellation_id"`
	SecurityStatus  float64             `json:"security_status"`
	SecurityClass   string              `json:"security_class,omitempty"`
	StarID          int64               `json:"star_id,omitempty"`
	Position        *snapshots.Position `json:"position,omitempty"`
	Stations        []int64             `json:"stations,omitempty"`
	Planets         []snapshots.Planet  `json:"planets,omitempty"`
	Stargates       []int64             `json:"stargates,omitempty"`
}

func renderSystem(rec snapshots.Record, lang string) any {
	r := rec.(*snapshots.SolarSystem)
	return systemResponse{SystemID: r.ID, Name: localized(r.Name, r.Names, lang), ConstellationID: r.ConstellationID,
		SecurityStatus: r.SecurityStatus, SecurityClass: r.SecurityClass, StarID: r.StarID,
		Position: r.Position, Stations: r.Stations, Planets: r.Planets, Stargates: r.Stargates}
}

type factionResponse struct {
	FactionID   int64  `json:"faction_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	snapshots.FactionDetails
}

func renderFaction(r *snapshots.Faction, lang string) factionResponse {
	return factionResponse{
		FactionID: r.ID, Name: localized(r.Name, r.Names, lang),
		Description: localized(r.Description, r.Descriptions, lang), FactionDetails: r.FactionDetails,
	}
}

// factions answers every faction, as ESI's list route does.
func (s *server) factions(c *gin.Context) {
	lang, ok := parseLocalized(c)
	if !ok {
		return
	}
	s.read(c, func(r Reader) {
		if s.revalidate(c, r, false, lang) {
			return
		}
		out := []factionResponse{}
		err := r.Each(snapshots.Factions, func(rec snapshots.Record) error {
			out = append(out, renderFaction(rec.(*snapshots.Faction), lang))
			return nil
		})
		if err != nil {
			s.internalError(c, err)
			return
		}
		c.JSON(http.StatusOK, out)
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decodeStrict decodes one JSON value into v, refusing fields v lacks so a
// misspelt field is reported instead of ignored.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// uniqueItems marks an array schema's items as distinct.
func uniqueItems(s map[string]any) map[string]any {
	s["uniqueItems"] = true
	return s
}
