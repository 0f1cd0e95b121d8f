package main

import "gds/cmd/esicheck/esiclient/esi"

// operation calls one operation of ESI's document through the generated
// client with a's values.
type operation func(a *args) (any, error)

// operations are the calls of the document's operations that gds serves,
// by operation ID; esiclient reports a served operation missing here.
var operations = map[string]operation{
	"GetAlliancesAllianceId": func(a *args) (any, error) {
		return a.c.GetAlliancesAllianceIdWithResponse(a.ctx, a.id("alliance_id"), params[esi.GetAlliancesAllianceIdParams](a), a.eds...)
	},
	"GetAlliancesAllianceIdContacts": func(a *args) (any, error) {
		return a.c.GetAlliancesAllianceIdContactsWithResponse(a.ctx, a.id("alliance_id"), params[esi.GetAlliancesAllianceIdContactsParams](a), a.eds...)
	},
	"PostCharactersAffiliation": func(a *args) (any, error) {
		return a.c.PostCharactersAffiliationWithResponse(a.ctx, params[esi.PostCharactersAffiliationParams](a), body[esi.PostCharactersAffiliationJSONRequestBody](a), a.eds...)
	},
	"GetCharactersDetail": func(a *args) (any, error) {
		return a.c.GetCharactersDetailWithResponse(a.ctx, a.id("character_id"), params[esi.GetCharactersDetailParams](a), a.eds...)
	},
	"GetCharactersCharacterIdFwStats": func(a *args) (any, error) {
		return a.c.GetCharactersCharacterIdFwStatsWithResponse(a.ctx, a.id("character_id"), params[esi.GetCharactersCharacterIdFwStatsParams](a), a.eds...)
	},
	"GetCharactersCharacterIdMining": func(a *args) (any, error) {
		return a.c.GetCharactersCharacterIdMiningWithResponse(a.ctx, a.id("character_id"), params[esi.GetCharactersCharacterIdMiningParams](a), a.eds...)
	},
	"GetCharactersCharacterIdSearch": func(a *args) (any, error) {
		return a.c.GetCharactersCharacterIdSearchWithResponse(a.ctx, a.id("character_id"), params[esi.GetCharactersCharacterIdSearchParams](a), a.eds...)
	},
	"GetCharactersCharacterIdTitles": func(a *args) (any, error) {
		return a.c.GetCharactersCharacterIdTitlesWithResponse(a.ctx, a.id("character_id"), params[esi.GetCharactersCharacterIdTitlesParams](a), a.eds...)
	},
	"GetCharactersCharacterIdWalletJournal": func(a *args) (any, error) {
		return a.c.GetCharactersCharacterIdWalletJournalWithResponse(a.ctx, a.id("character_id"), params[esi.GetCharactersCharacterIdWalletJournalParams](a), a.eds...)
	},
	"GetCorporationCorporationIdMiningObservers": func(a *args) (any, error) {
		return a.c.GetCorporationCorporationIdMiningObserversWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationCorporationIdMiningObserversParams](a), a.eds...)
	},
	"GetCorporationCorporationIdMiningObserversObserverId": func(a *args) (any, error) {
		return a.c.GetCorporationCorporationIdMiningObserversObserverIdWithResponse(a.ctx, a.id("corporation_id"), a.id("observer_id"), params[esi.GetCorporationCorporationIdMiningObserversObserverIdParams](a), a.eds...)
	},
	"GetCorporationsCorporationId": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdParams](a), a.eds...)
	},
	"PostCorporationsCorporationIdAssetsLocations": func(a *args) (any, error) {
		return a.c.PostCorporationsCorporationIdAssetsLocationsWithResponse(a.ctx, a.id("corporation_id"), params[esi.PostCorporationsCorporationIdAssetsLocationsParams](a), body[esi.PostCorporationsCorporationIdAssetsLocationsJSONRequestBody](a), a.eds...)
	},
	"PostCorporationsCorporationIdAssetsNames": func(a *args) (any, error) {
		return a.c.PostCorporationsCorporationIdAssetsNamesWithResponse(a.ctx, a.id("corporation_id"), params[esi.PostCorporationsCorporationIdAssetsNamesParams](a), body[esi.PostCorporationsCorporationIdAssetsNamesJSONRequestBody](a), a.eds...)
	},
	"GetCorporationsCorporationIdContainersLogs": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdContainersLogsWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdContainersLogsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdContracts": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdContractsWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdContractsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdContractsContractIdBids": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdContractsContractIdBidsWithResponse(a.ctx, a.id("corporation_id"), a.id("contract_id"), params[esi.GetCorporationsCorporationIdContractsContractIdBidsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdContractsContractIdItems": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdContractsContractIdItemsWithResponse(a.ctx, a.id("corporation_id"), a.id("contract_id"), params[esi.GetCorporationsCorporationIdContractsContractIdItemsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdCustomsOffices": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdCustomsOfficesWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdCustomsOfficesParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdFacilities": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdFacilitiesWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdFacilitiesParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdFwStats": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdFwStatsWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdFwStatsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdIndustryJobs": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdIndustryJobsWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdIndustryJobsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdMedals": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdMedalsWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdMedalsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdMedalsIssued": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdMedalsIssuedWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdMedalsIssuedParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdMembersTitles": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdMembersTitlesWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdMembersTitlesParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdOrders": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdOrdersWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdOrdersParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdRolesHistory": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdRolesHistoryWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdRolesHistoryParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdStandings": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdStandingsWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdStandingsParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdStarbases": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdStarbasesWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdStarbasesParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdStarbasesStarbaseId": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdStarbasesStarbaseIdWithResponse(a.ctx, a.id("corporation_id"), a.id("starbase_id"), params[esi.GetCorporationsCorporationIdStarbasesStarbaseIdParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdStructures": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdStructuresWithResponse(a.ctx, a.id("corporation_id"), params[esi.GetCorporationsCorporationIdStructuresParams](a), a.eds...)
	},
	"GetCorporationsCorporationIdWalletsDivisionJournal": func(a *args) (any, error) {
		return a.c.GetCorporationsCorporationIdWalletsDivisionJournalWithResponse(a.ctx, a.id("corporation_id"), a.id("division"), params[esi.GetCorporationsCorporationIdWalletsDivisionJournalParams](a), a.eds...)
	},
	"GetMetaChangelog": func(a *args) (any, error) {
		return a.c.GetMetaChangelogWithResponse(a.ctx, params[esi.GetMetaChangelogParams](a), a.eds...)
	},
	"GetMetaCompatibilityDates": func(a *args) (any, error) {
		return a.c.GetMetaCompatibilityDatesWithResponse(a.ctx, params[esi.GetMetaCompatibilityDatesParams](a), a.eds...)
	},
	"GetMetaStatus": func(a *args) (any, error) {
		return a.c.GetMetaStatusWithResponse(a.ctx, params[esi.GetMetaStatusParams](a), a.eds...)
	},
	"GetUniverseConstellationsConstellationId": func(a *args) (any, error) {
		return a.c.GetUniverseConstellationsConstellationIdWithResponse(a.ctx, a.id("constellation_id"), params[esi.GetUniverseConstellationsConstellationIdParams](a), a.eds...)
	},
	"GetUniverseFactions": func(a *args) (any, error) {
		return a.c.GetUniverseFactionsWithResponse(a.ctx, params[esi.GetUniverseFactionsParams](a), a.eds...)
	},
	"PostUniverseIds": func(a *args) (any, error) {
		return a.c.PostUniverseIdsWithResponse(a.ctx, params[esi.PostUniverseIdsParams](a), body[esi.PostUniverseIdsJSONRequestBody](a), a.eds...)
	},
	"PostUniverseNames": func(a *args) (any, error) {
		return a.c.PostUniverseNamesWithResponse(a.ctx, params[esi.PostUniverseNamesParams](a), body[esi.PostUniverseNamesJSONRequestBody](a), a.eds...)
	},
	"GetUniverseRegionsRegionId": func(a *args) (any, error) {
		return a.c.GetUniverseRegionsRegionIdWithResponse(a.ctx, a.id("region_id"), params[esi.GetUniverseRegionsRegionIdParams](a), a.eds...)
	},
	"GetUniverseStationsStationId": func(a *args) (any, error) {
		return a.c.GetUniverseStationsStationIdWithResponse(a.ctx, a.id("station_id"), params[esi.GetUniverseStationsStationIdParams](a), a.eds...)
	},
	"GetUniverseSystemsSystemId": func(a *args) (any, error) {
		return a.c.GetUniverseSystemsSystemIdWithResponse(a.ctx, a.id("system_id"), params[esi.GetUniverseSystemsSystemIdParams](a), a.eds...)
	},
	"GetUniverseTypesTypeId": func(a *args) (any, error) {
		return a.c.GetUniverseTypesTypeIdWithResponse(a.ctx, a.id("type_id"), params[esi.GetUniverseTypesTypeIdParams](a), a.eds...)
	},
}
