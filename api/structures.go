package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"gds/query"
	"gds/snapshots"
)

// Scopes of the structures routes, as EVE SSO names them.
const (
	scopeReadStructures  = "esi-corporations.read_structures.v1"
	scopeWriteStructures = "esi-corporations.write_structures.v1"
)

// Paging and body limits of the structures routes, as ESI has them.
const (
	structuresPerPage = 250
	// maxWindows is one window per hour of the week.
	maxWindows = 7 * 24
)

const (
	msgNoRole       = "Character does not have required role(s)"
	msgNoSuchPage   = "Requested page does not exist!"
	msgNoStructure  = "Structure not found"
	structuresTag   = "Corporation"
	corpStructsPath = "/corporations/{corporation_id}/structures/"
)

// structureRoutes are the corporation structures routes (docs/api.md,
// Corporation structures).
// Every label change comes from the release day (release.go).
func (s *server) structureRoutes() []Route {
	lc := s.lifecycles()
	listParams := []Param{idParamDoc("corporation_id"), pageParamDoc, languageParamDoc, datasourceParamDoc}
	v1Doc := &Doc{Params: listParams, Response: arrayOf(structureV1Schema)}
	return []Route{
		{
			Method: http.MethodGet, Path: corpStructsPath, Tags: []string{structuresTag},
			RateLimit: RateGroupCorpStructure,
			Summary: "Get corporation structures: needs the Station_Manager role in the corporation; " +
				"paged by 250 with the X-Pages header",
			Scope: scopeReadStructures, Roles: structureRoles,
			Doc: Doc{Params: listParams, Response: arrayOf(structureV2Schema)},
			Versions: []Version{
				{N: 1, Handler: s.listStructuresV1, Lifecycle: lc.ListV1, Doc: v1Doc},
				{N: 2, Handler: s.listStructuresV2, Lifecycle: lc.ListV2},
			},
		},
		{
			Method: http.MethodPut, Path: "/corporations/{corporation_id}/structures/{structure_id}/",
			Tags:      []string{structuresTag},
			RateLimit: RateGroupCorpStructure,
			Summary: "Update structure vulnerability schedule: validated and answered 204, but the snapshot " +
				"is read-only so nothing changes; legacy answers 204 always, then the route is removed",
			Scope: scopeWriteStructures, Roles: structureRoles,
			Doc: Doc{Status: http.StatusNoContent, Params: []Param{
				idParamDoc("corporation_id"), idParamDoc("structure_id"), datasourceParamDoc, windowsBodyDoc,
			}},
			Versions: []Version{{N: 1, Handler: s.putStructureV1, Lifecycle: lc.PutV1}},
		},
	}
}

// olderRoutes are the two routes of the older interface,
// served without a version prefix until the release day.
func (s *server) olderRoutes() []Route {
	lc := s.lifecycles().Older
	return []Route{
		{
			Method: http.MethodGet, Path: corpStructsPath, Unversioned: true, Tags: []string{structuresTag},
			RateLimit: RateGroupCorpStructure,
			Summary:   "Older interface: corporation structures in the v1 shape",
			Scope:     scopeReadStructures, Roles: structureRoles,
			// N is 1 so logs and metrics label it like the v1 it resembles.
			Versions: []Version{{N: 1, Handler: s.listStructuresV1, Lifecycle: lc}},
		},
		{
			Method: http.MethodPut, Path: "/structures/{structure_id}/", Unversioned: true, Tags: []string{structuresTag},
			RateLimit: RateGroupCorpStructure,
			Summary:   "Older interface: set a structure's vulnerability windows (validated, changes nothing)",
			Scope:     scopeWriteStructures, Roles: structureRoles,
			Versions: []Version{{N: 1, Handler: s.putStructureOlder, Lifecycle: lc}},
		},
	}
}

// released reports whether at is on or after the release day.
func (s *server) released(at time.Time) bool { return !at.Before(s.releaseDay()) }

// serviceResponse is one structure service.
type serviceResponse struct {
	Name  string `json:"name"`
	State string `json:"state" schema:"enum=online|offline|cleanup"`
}

// structureV2 is an element of the v2 list. Power mode is not a field:
// clients derive it from services (docs/api.md, Corporation structures).
type structureV2 struct {
	StructureID          int64             `json:"structure_id"`
	TypeID               int64             `json:"type_id"`
	CorporationID        int64             `json:"corporation_id"`
	SystemID             int64             `json:"system_id"`
	ProfileID            int64             `json:"profile_id"`
	State                string            `json:"state" schema:"enum=@structure_state"`
	ReinforceWeekday     int               `json:"reinforce_weekday" schema:"min=0,max=6"`
	ReinforceHour        int               `json:"reinforce_hour" schema:"min=0,max=23"`
	Services             []serviceResponse `json:"services,omitempty"`
	NextReinforceWeekday *int              `json:"next_reinforce_weekday,omitempty" schema:"min=0,max=6"`
	NextReinforceHour    *int              `json:"next_reinforce_hour,omitempty" schema:"min=0,max=23"`
	NextReinforceApply   *time.Time        `json:"next_reinforce_apply,omitempty"`
	FuelExpires          *time.Time        `json:"fuel_expires,omitempty"`
	StateTimerStart      *time.Time        `json:"state_timer_start,omitempty"`
	StateTimerEnd        *time.Time        `json:"state_timer_end,omitempty"`
	UnanchorsAt          *time.Time        `json:"unanchors_at,omitempty"`
}

// structureV1 is an element of the old list: no state or reinforce_*, the
// weekly vulnerability windows instead.
type structureV1 struct {
	StructureID     int64              `json:"structure_id"`
	TypeID          int64              `json:"type_id"`
	CorporationID   int64              `json:"corporation_id"`
	SystemID        int64              `json:"system_id"`
	ProfileID       int64              `json:"profile_id"`
	CurrentVul      []snapshots.Window `json:"current_vul" schema:"maxItems=168"`
	NextVul         []snapshots.Window `json:"next_vul" schema:"maxItems=168"`
	Services        []serviceResponse  `json:"services,omitempty"`
	FuelExpires     *time.Time         `json:"fuel_expires,omitempty"`
	StateTimerStart *time.Time         `json:"state_timer_start,omitempty"`
	StateTimerEnd   *time.Time         `json:"state_timer_end,omitempty"`
	UnanchorsAt     *time.Time         `json:"unanchors_at,omitempty"`
}

func services(list []snapshots.Service) []serviceResponse {
	if len(list) == 0 {
		return nil
	}
	out := make([]serviceResponse, len(list))
	for i, sv := range list {
		out[i] = serviceResponse(sv)
	}
	return out
}

func renderStructureV2(st *snapshots.Structure) structureV2 {
	out := structureV2{
		StructureID: st.ID, TypeID: st.TypeID, CorporationID: st.CorporationID, SystemID: st.SystemID,
		ProfileID: st.ProfileID, State: st.State, ReinforceWeekday: st.ReinforceWeekday,
		ReinforceHour: st.ReinforceHour, Services: services(st.Services), FuelExpires: st.FuelExpires,
		StateTimerStart: st.StateTimerStart, StateTimerEnd: st.StateTimerEnd, UnanchorsAt: st.UnanchorsAt,
	}
	// Rule 1: the trio appears only when a change was requested, and only
	// whole.
	if st.NextReinforceWeekday != nil && st.NextReinforceHour != nil && st.NextReinforceApply != nil {
		apply := st.NextReinforceApply.UTC()
		out.NextReinforceWeekday, out.NextReinforceHour, out.NextReinforceApply =
			st.NextReinforceWeekday, st.NextReinforceHour, &apply
	}
	return out
}

// renderStructureV1 keeps the old shape; after the release day the windows
// no longer mean anything and are empty lists.
func renderStructureV1(st *snapshots.Structure, released bool) structureV1 {
	out := structureV1{
		StructureID: st.ID, TypeID: st.TypeID, CorporationID: st.CorporationID, SystemID: st.SystemID,
		ProfileID: st.ProfileID, CurrentVul: []snapshots.Window{}, NextVul: []snapshots.Window{},
		Services: services(st.Services), FuelExpires: st.FuelExpires,
		StateTimerStart: st.StateTimerStart, StateTimerEnd: st.StateTimerEnd, UnanchorsAt: st.UnanchorsAt,
	}
	if !released {
		out.CurrentVul, out.NextVul = nonNil(st.CurrentVul), nonNil(st.NextVul)
	}
	return out
}

func (s *server) listStructuresV1(c *gin.Context) {
	released := s.released(s.now())
	// The shape changes at the release, the generation does not: the
	// validator must.
	variant := fmt.Sprintf("released=%t", released)
	s.listStructures(c, variant, func(st *snapshots.Structure) any { return renderStructureV1(st, released) })
}

func (s *server) listStructuresV2(c *gin.Context) {
	s.listStructures(c, "", func(st *snapshots.Structure) any { return renderStructureV2(st) })
}

// listStructures answers one page of a corporation's structures to a
// Station_Manager of that corporation, each rendered by render.
func (s *server) listStructures(c *gin.Context, variant string, render func(*snapshots.Structure) any) {
	corp, ok := parseID(c, "corporation_id")
	if !ok {
		return
	}
	page, ok := parsePage(c)
	if !ok || !parseDatasource(c) {
		return
	}
	// ESI's list takes a language (its service names are localized); the
	// snapshot's are not, so the answer is the same in every language,
	// but it says so as ESI's does.
	if _, ok := parseLanguage(c); !ok {
		return
	}
	claims, ok := s.authorize(c, 0, scopeReadStructures)
	if !ok {
		return
	}
	s.read(c, func(v Reader) {
		if s.requireRole(c, v, claims.CharacterID, corp) {
			s.answerStructures(c, v, corp, page, variant, render)
		}
	})
}

// answerStructures answers one page of corp's structures from v, each
// rendered by render, once the caller holds the Station_Manager role.
func (s *server) answerStructures(c *gin.Context, v Reader, corp int64, page int, variant string, render func(*snapshots.Structure) any) {
	all, err := v.StructuresOf(corp)
	if err != nil {
		s.internalError(c, err)
		return
	}
	pages := max(1, (len(all)+structuresPerPage-1)/structuresPerPage)
	c.Header("X-Pages", strconv.Itoa(pages))
	if page > pages {
		writeError(c, http.StatusNotFound, msgNoSuchPage)
		return
	}
	if s.revalidate(c, v, true, fmt.Sprintf("page=%d %s", page, variant)) {
		return
	}
	lo := (page - 1) * structuresPerPage
	hi := min(len(all), lo+structuresPerPage)
	out := make([]any, 0, hi-lo)
	for _, st := range all[lo:hi] {
		// StructuresOf groups by owner; checking again keeps a store bug
		// from leaking another corporation's structures.
		if st.CorporationID != corp {
			continue
		}
		out = append(out, render(st))
	}
	c.JSON(http.StatusOK, out)
}

// structureRoles are the roles of the structures routes: ESI's
// x-required-roles.
var structureRoles = []string{RoleStationManager}

// requireRole answers 403 unless character belongs to corp and holds
// Station_Manager (or Director) there. Roles are per corporation: the role
// in another corporation counts for nothing.
func (s *server) requireRole(c *gin.Context, v Reader, character, corp int64) bool {
	return s.corporationAccess(c, v, character, corp, structureRoles)
}

// putStructureV1 answers the v1 vulnerability update. While latest it
// checks everything a real update would and answers 204; the snapshot is
// read-only, so nothing changes. Once legacy it answers 204 always, as the
// game did in the two weeks before removal.
func (s *server) putStructureV1(c *gin.Context) {
	if PhaseOf(c) == PhaseLegacy {
		c.Status(http.StatusNoContent)
		return
	}
	corp, ok := parseID(c, "corporation_id")
	if !ok {
		return
	}
	s.putStructure(c, corp)
}

// putStructureOlder is the older interface's update: the structure's owner
// takes the place of the path's corporation.
func (s *server) putStructureOlder(c *gin.Context) { s.putStructure(c, 0) }

// putStructure checks an update of structure_id's windows by a
// Station_Manager of its corporation (corp, or the owner when 0) and
// answers 204 without changing anything: the data is a read-only snapshot.
func (s *server) putStructure(c *gin.Context, corp int64) {
	id, ok := parseID(c, "structure_id")
	if !ok || !parseDatasource(c) {
		return
	}
	claims, ok := s.authorize(c, 0, scopeWriteStructures)
	if !ok {
		return
	}
	if _, err := parseWindows(c.Request.Body); err != nil {
		writeBodyError(c, err)
		return
	}
	s.read(c, func(v Reader) {
		owner, err := structureOwner(v, id)
		if err != nil {
			s.internalError(c, err)
			return
		}
		if corp == 0 {
			corp = owner
		}
		if !s.requireRole(c, v, claims.CharacterID, corp) {
			return
		}
		// The same answer for another corporation's structure as for
		// none, so the route does not tell which structures exist.
		if owner != corp {
			writeError(c, http.StatusNotFound, msgNoStructure)
			return
		}
		c.Status(http.StatusNoContent)
	})
}

// structureOwner returns the corporation owning structure id, 0 when none.
func structureOwner(v Reader, id int64) (int64, error) {
	rec, err := v.Record(snapshots.Structures, id)
	if errors.Is(err, query.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return rec.(*snapshots.Structure).CorporationID, nil
}

// parseWindows reads the PUT body: 1 to 168 windows {"day": 0-6, "hour":
// 0-23}, naming the index and field of the first bad one.
func parseWindows(body io.Reader) ([]snapshots.Window, error) {
	return decodeBodyList(body, maxWindows, func(i int, raw json.RawMessage, out *snapshots.Window) error {
		var w struct {
			Day  *int `json:"day"`
			Hour *int `json:"hour"`
		}
		if err := decodeStrict(raw, &w); err != nil {
			return fmt.Errorf("request body[%d]: must be an object {\"day\": 0-6, \"hour\": 0-23}: %v", i, err)
		}
		if w.Day == nil {
			return fmt.Errorf("request body[%d].day: missing", i)
		}
		if w.Hour == nil {
			return fmt.Errorf("request body[%d].hour: missing", i)
		}
		*out = snapshots.Window{Day: *w.Day, Hour: *w.Hour}
		if err := out.Validate(); err != nil {
			return fmt.Errorf("request body[%d].%w", i, err)
		}
		return nil
	}, nil)
}

var windowSchema = object([]string{"day", "hour"}, map[string]any{
	"day": schemaRange(schemaInt32(), 0, 6), "hour": schemaRange(schemaInt32(), 0, 23),
})

var windowsBodyDoc = Param{Name: "new_schedule", In: "body", Required: true,
	Description: "1 to 168 vulnerability windows; day 0 is Monday. Nothing changes: the data is a read-only snapshot",
	Schema:      schemaArray(windowSchema, 1, maxWindows)}
