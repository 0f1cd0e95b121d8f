package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"gds/query"
)

// documentRoute is one document route (docs/api.md, Character and
// corporation documents). Its answers are opaque JSON
// documents the snapshot holds per concrete path; the service knows
// nothing of their shape.
type documentRoute struct {
	method, path string
	version      int
	// scope is the EVE SSO scope ESI requires for the route.
	scope, tag, summary string
	// roles are ESI's x-required-roles of a corporation route: the token's
	// character must hold one of them in the path's corporation. A
	// corporation route without roles still requires membership.
	roles []string
}

// documentTable lists the document routes, with ESI's scopes and tags.
var documentTable = []documentRoute{
	{"GET", "/characters/{character_id}/bookmarks/", 2, "esi-bookmarks.read_character_bookmarks.v1", "Bookmarks", "List bookmarks", nil},
	{"GET", "/characters/{character_id}/bookmarks/folders/", 2, "esi-bookmarks.read_character_bookmarks.v1", "Bookmarks", "List bookmark folders", nil},
	{"GET", "/alliances/{alliance_id}/contacts/", 1, "esi-alliances.read_contacts.v1", "Contacts", "Get alliance contacts", nil},
	{"GET", "/characters/{character_id}/fw/stats/", 1, "esi-characters.read_fw_stats.v1", "Faction Warfare", "Overview of a character involved in faction warfare", nil},
	{"GET", "/characters/{character_id}/mining/", 1, "esi-industry.read_character_mining.v1", "Industry", "Character mining ledger", nil},
	{"GET", "/characters/{character_id}/titles/", 1, "esi-characters.read_titles.v1", "Character", "Get character corporation titles", nil},
	{"GET", "/characters/{character_id}/wallet/journal/", 3, "esi-wallet.read_character_wallet.v1", "Wallet", "Get character wallet journal", nil},
	{"GET", "/corporations/{corporation_id}/bookmarks/", 1, "esi-bookmarks.read_corporation_bookmarks.v1", "Bookmarks", "List corporation bookmarks", nil},
	{"GET", "/corporations/{corporation_id}/bookmarks/folders/", 1, "esi-bookmarks.read_corporation_bookmarks.v1", "Bookmarks", "List corporation bookmark folders", nil},
	{"GET", "/corporations/{corporation_id}/containers/logs/", 1, "esi-corporations.read_container_logs.v1", "Corporation", "Get all corporation ALSC logs", []string{RoleDirector}},
	{"GET", "/corporations/{corporation_id}/contracts/", 1, "esi-contracts.read_corporation_contracts.v1", "Contracts", "Get corporation contracts", nil},
	{"GET", "/corporations/{corporation_id}/contracts/{contract_id}/bids/", 1, "esi-contracts.read_corporation_contracts.v1", "Contracts", "Get corporation contract bids", nil},
	{"GET", "/corporations/{corporation_id}/contracts/{contract_id}/items/", 1, "esi-contracts.read_corporation_contracts.v1", "Contracts", "Get corporation contract items", nil},
	{"GET", "/corporations/{corporation_id}/customs_offices/", 1, "esi-planets.read_customs_offices.v1", "Planetary Interaction", "List corporation customs offices", []string{RoleDirector}},
	{"GET", "/corporations/{corporation_id}/facilities/", 1, "esi-corporations.read_facilities.v1", "Corporation", "Get corporation facilities", []string{RoleFactoryManager}},
	{"GET", "/corporations/{corporation_id}/fw/stats/", 1, "esi-corporations.read_fw_stats.v1", "Faction Warfare", "Overview of a corporation involved in faction warfare", nil},
	{"GET", "/corporations/{corporation_id}/industry/jobs/", 1, "esi-industry.read_corporation_jobs.v1", "Industry", "List corporation industry jobs", []string{RoleFactoryManager}},
	{"GET", "/corporations/{corporation_id}/medals/", 1, "esi-corporations.read_medals.v1", "Corporation", "Get corporation medals", nil},
	{"GET", "/corporations/{corporation_id}/medals/issued/", 1, "esi-corporations.read_medals.v1", "Corporation", "Get corporation issued medals", []string{RoleDirector}},
	{"GET", "/corporations/{corporation_id}/members/titles/", 1, "esi-corporations.read_titles.v1", "Corporation", "Get corporation's members' titles", []string{RoleDirector}},
	{"GET", "/corporation/{corporation_id}/mining/observers/", 1, "esi-industry.read_corporation_mining.v1", "Industry", "Corporation mining observers", []string{RoleAccountant}},
	{"GET", "/corporation/{corporation_id}/mining/observers/{observer_id}/", 1, "esi-industry.read_corporation_mining.v1", "Industry", "Observed corporation mining", []string{RoleAccountant}},
	{"GET", "/corporations/{corporation_id}/orders/", 1, "esi-markets.read_corporation_orders.v1", "Market", "List open orders from a corporation", []string{RoleAccountant, RoleTrader}},
	{"GET", "/corporations/{corporation_id}/roles/history/", 1, "esi-corporations.read_corporation_membership.v1", "Corporation", "Get corporation member roles history", []string{RoleDirector}},
	{"GET", "/corporations/{corporation_id}/standings/", 1, "esi-corporations.read_standings.v1", "Corporation", "Get corporation standings", nil},
	{"GET", "/corporations/{corporation_id}/starbases/", 1, "esi-corporations.read_starbases.v1", "Corporation", "Get corporation starbases (POSes)", []string{RoleDirector}},
	{"GET", "/corporations/{corporation_id}/starbases/{starbase_id}/", 1, "esi-corporations.read_starbases.v1", "Corporation", "Get starbase (POS) detail", []string{RoleDirector}},
	{"GET", "/corporations/{corporation_id}/wallets/{division}/journal/", 2, "esi-wallet.read_corporation_wallets.v1", "Wallet", "Get corporation wallet journal", []string{RoleAccountant, RoleJuniorAccountant}},
	{"POST", "/corporations/{corporation_id}/assets/locations/", 1, "esi-assets.read_corporation_assets.v1", "Assets", "Get corporation asset locations", []string{RoleDirector}},
	{"POST", "/corporations/{corporation_id}/assets/names/", 1, "esi-assets.read_corporation_assets.v1", "Assets", "Get corporation asset names", []string{RoleDirector}},
}

// maxDivision is the highest corporation wallet division.
const maxDivision = 7

// maxItemIDs bounds the item IDs of the POST routes, as ESI does.
const maxItemIDs = 1000

// documentRoutes are the document routes, answered from the
// snapshot's documents.
func (s *server) documentRoutes() []Route {
	lc := s.lifecycles().Current
	out := make([]Route, 0, len(documentTable))
	for _, d := range documentTable {
		who := "a token with the scope of a member of the path's corporation"
		switch {
		case characterRoute(d.path):
			who = "a token of the path's character with the scope"
		case allianceRoute(d.path):
			who = "a token with the scope of a member of the path's alliance"
		case len(d.roles) > 0:
			who += " holding one of the roles " + strings.Join(d.roles, ", ") + " (or Director)"
		}
		doc := Doc{Response: anyJSON()}
		for _, name := range pathParams(d.path) {
			doc.Params = append(doc.Params, idParamDoc(name))
		}
		doc.Params = append(doc.Params, datasourceParamDoc)
		if d.method == http.MethodPost {
			doc.Params = append(doc.Params, Param{Name: "item_ids", In: "body", Required: true,
				Description: fmt.Sprintf("1 to %d item IDs", maxItemIDs), Schema: schemaArray(schemaInt64(), 1, maxItemIDs)})
		}
		out = append(out, Route{
			Method: d.method, Path: d.path, Summary: d.summary + "; requires " + who,
			Tags: []string{d.tag}, Scope: d.scope, Roles: d.roles, Doc: doc, RateLimit: documentRateGroup(d.path),
			Versions: []Version{{N: d.version, Handler: s.documentHandler(d), Lifecycle: lc}},
		})
	}
	return out
}

// documentRateGroup is the rate-limit group of a document route: its
// character's or its corporation's (alliances count as corporations).
func documentRateGroup(path string) string {
	if characterRoute(path) {
		return RateGroupCharDetail
	}
	return RateGroupCorpDetail
}

// characterRoute reports whether the route is about the path's character,
// whose token alone may read it.
func characterRoute(path string) bool { return strings.HasPrefix(path, "/characters/{character_id}/") }

// allianceRoute reports whether the route is about the path's alliance,
// which only its members may read.
func allianceRoute(path string) bool { return strings.HasPrefix(path, "/alliances/{alliance_id}/") }

// pathParams are the {names} of a path template, in order.
func pathParams(path string) []string {
	var out []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, seg[1:len(seg)-1])
		}
	}
	return out
}

// documentHandler answers the snapshot's document for the concrete path
// (without version prefix), or 404.
func (s *server) documentHandler(d documentRoute) gin.HandlerFunc {
	return func(c *gin.Context) {
		concrete, ids, ok := concretePath(c, d.path)
		if !ok || !parseDatasource(c) {
			return
		}
		var character int64
		if characterRoute(d.path) {
			character = ids["character_id"]
		}
		claims, ok := s.authorize(c, character, d.scope)
		if !ok {
			return
		}
		s.read(c, func(v Reader) { s.answerDocument(c, v, d, concrete, ids, claims.CharacterID) })
	}
}

// answerDocument answers a document route once its token is verified:
// membership and roles checked against v, then the document stored for
// the concrete path.
func (s *server) answerDocument(c *gin.Context, v Reader, d documentRoute, concrete string, ids map[string]int64, character int64) {
	if corp, ok := ids["corporation_id"]; ok && !s.corporationAccess(c, v, character, corp, d.roles) {
		return
	}
	if alliance, ok := ids["alliance_id"]; ok && !s.allianceAccess(c, v, character, alliance) {
		return
	}
	if d.method == http.MethodPost {
		if _, err := parseIDList(c.Request.Body, maxItemIDs, false, math.MaxInt64); err != nil {
			writeBodyError(c, err)
			return
		}
	}
	if d.method == http.MethodGet && s.revalidate(c, v, true, "") {
		return
	}
	body, err := v.Document(concrete)
	if errors.Is(err, query.ErrNotFound) {
		writeError(c, http.StatusNotFound, "No data for "+concrete)
		return
	}
	if err != nil {
		s.internalError(c, err)
		return
	}
	sendJSON(c, body)
}

// concretePath parses every path parameter of template and writes the
// path with them in canonical form, the key documents are stored under.
func concretePath(c *gin.Context, template string) (string, map[string]int64, bool) {
	ids := map[string]int64{}
	segs := strings.Split(template, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") {
			continue
		}
		name := seg[1 : len(seg)-1]
		id, ok := parseID(c, name)
		if !ok {
			return "", nil, false
		}
		if name == "division" && id > maxDivision {
			badParam(c, name, "must be 1 to %d, got %d", maxDivision, id)
			return "", nil, false
		}
		ids[name] = id
		segs[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(segs, "/"), ids, true
}
