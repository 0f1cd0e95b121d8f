package api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"gds/query"
	"gds/snapshots"
)

// Corporation roles the route table requires, as ESI's x-required-roles
// name them.
const (
	RoleDirector         = "Director"
	RoleAccountant       = "Accountant"
	RoleJuniorAccountant = "Junior_Accountant"
	RoleFactoryManager   = "Factory_Manager"
	RoleTrader           = "Trader"
	RoleStationManager   = snapshots.RoleStationManager
)

// ESI's messages for a character outside the path's corporation or
// alliance; a missing role is msgNoRole.
const (
	msgNotInCorporation = "Character is not in the corporation"
	msgNotInAlliance    = "Character is not in the alliance"
)

// corporationAccess answers 403 and reports false unless character
// belongs to corp and, when roles is not empty, holds one of them there (a
// Director holds every role, as in the game). Membership comes from the
// snapshot's character record, or its roles record when it has none;
// roles count only in the corporation their record names.
func (s *server) corporationAccess(c *gin.Context, v Reader, character, corp int64, roles []string) bool {
	member := false
	ch, err := v.Record(snapshots.Characters, character)
	found := err == nil
	switch {
	case found:
		if rec, ok := ch.(*snapshots.Character); ok {
			member = rec.CorporationID == corp
		}
	case !errors.Is(err, query.ErrNotFound):
		s.internalError(c, err)
		return false
	}
	held := &snapshots.CharacterRoles{}
	switch rec, err := v.Record(snapshots.Roles, character); {
	case err == nil:
		held = rec.(*snapshots.CharacterRoles)
	case !errors.Is(err, query.ErrNotFound):
		s.internalError(c, err)
		return false
	}
	if !found && held.CorporationID == corp {
		member = true
	}
	if !member || corp <= 0 {
		msg := msgNotInCorporation
		if len(roles) > 0 {
			// A character outside the corporation holds none of its roles.
			msg = msgNoRole
		}
		writeError(c, http.StatusForbidden, msg)
		return false
	}
	if len(roles) == 0 {
		return true
	}
	if held.CorporationID == corp && (held.Has(RoleDirector) || slices.ContainsFunc(roles, held.Has)) {
		return true
	}
	writeError(c, http.StatusForbidden, msgNoRole)
	return false
}

// allianceAccess answers 403 and reports false unless character belongs to
// alliance, by its own record or its corporation's.
func (s *server) allianceAccess(c *gin.Context, v Reader, character, alliance int64) bool {
	in := false
	ch, err := v.Record(snapshots.Characters, character)
	if err != nil && !errors.Is(err, query.ErrNotFound) {
		s.internalError(c, err)
		return false
	}
	if rec, ok := ch.(*snapshots.Character); ok && err == nil {
		in = rec.AllianceID == alliance
		if !in && rec.AllianceID == 0 {
			corp, err := v.Record(snapshots.Corporations, rec.CorporationID)
			if err != nil && !errors.Is(err, query.ErrNotFound) {
				s.internalError(c, err)
				return false
			}
			if co, ok := corp.(*snapshots.Corporation); ok && err == nil {
				in = co.AllianceID == alliance
			}
		}
	}
	if !in || alliance <= 0 {
		writeError(c, http.StatusForbidden, msgNotInAlliance)
		return false
	}
	return true
}
