package synth

import (
	"fmt"
	"time"
)

// moreCorporation makes the corporation documents beyond those of
// corporation(): one per remaining document route, each in the shape of
// ESI's answer (its required fields), so every document route of the
// sample answers something `make esi-check` can validate.
func (d docBuilder) moreCorporation(c int64) []docSpec {
	id := d.w.corpIDs.id(c)
	base := fmt.Sprintf("/corporations/%d/", id)
	ceo := d.w.charIDs.id(d.w.member(c, 0))
	day := func(span time.Duration) string { return d.past(span).Format("2006-01-02") }
	stamp := func(span time.Duration) time.Time { return d.past(span).Truncate(time.Second) }
	observer := structureLo + d.rng.Int64N(1_000_000_000)
	contract := 100_000_000 + d.rng.Int64N(100_000_000)
	starbase := 1_000_000_000 + d.rng.Int64N(100_000_000)
	item := 1_000_000_000_000 + d.rng.Int64N(1_000_000_000)
	type obj = map[string]any
	week := 7 * 24 * time.Hour
	return []docSpec{
		{fmt.Sprintf("/corporation/%d/mining/observers/", id), func() any {
			return []obj{{"observer_id": observer, "observer_type": "structure", "last_updated": day(week)}}
		}},
		{fmt.Sprintf("/corporation/%d/mining/observers/%d/", id, observer), func() any {
			return []obj{{"character_id": ceo, "recorded_corporation_id": id, "type_id": oreTypes[d.rng.IntN(len(oreTypes))],
				"quantity": 1000 + d.rng.Int64N(50_000), "last_updated": day(week)}}
		}},
		{base + "assets/locations/", func() any {
			return []obj{{"item_id": item, "position": obj{"x": 1.5e11, "y": -2.5e10, "z": 3.2e11}}}
		}},
		{base + "assets/names/", func() any { return []obj{{"item_id": item, "name": "Hangar container"}} }},
		{base + "bookmarks/", func() any {
			return []obj{{"bookmark_id": 10_000_000 + d.rng.Int64N(90_000_000), "creator_id": ceo, "created": stamp(week),
				"label": "Corp safe", "notes": "", "location_id": d.system(), "folder_id": 1}}
		}},
		{base + "bookmarks/folders/", func() any { return []obj{{"folder_id": 1, "name": "Corp safes"}} }},
		{base + "containers/logs/", func() any {
			return []obj{{"logged_at": stamp(week), "container_id": item, "container_type_id": 17366, "character_id": ceo,
				"location_id": structureLo + d.rng.Int64N(1_000_000_000), "action": "add", "location_flag": "CorpSAG1"}}
		}},
		{base + "contracts/", func() any {
			issued := stamp(week)
			return []obj{{"contract_id": contract, "issuer_id": ceo, "issuer_corporation_id": id, "assignee_id": 0,
				"acceptor_id": 0, "type": "auction", "status": "outstanding", "for_corporation": true,
				"availability": "public", "date_issued": issued, "date_expired": issued.Add(14 * 24 * time.Hour),
				"price": 1e6, "title": "Rifter", "volume": 2500}}
		}},
		{fmt.Sprintf("%scontracts/%d/bids/", base, contract), func() any {
			return []obj{{"bid_id": 1 + d.rng.Int64N(1_000_000), "bidder_id": ceo, "date_bid": stamp(week), "amount": 1.25e6}}
		}},
		{fmt.Sprintf("%scontracts/%d/items/", base, contract), func() any {
			return []obj{{"record_id": 1 + d.rng.Int64N(1_000_000_000), "type_id": 587, "quantity": 1, "is_singleton": false, "is_included": true}}
		}},
		{base + "customs_offices/", func() any {
			return []obj{{"office_id": item + 1, "system_id": d.system(), "reinforce_exit_start": 18, "reinforce_exit_end": 20,
				"allow_alliance_access": true, "allow_access_with_standings": false, "corporation_tax_rate": 0.05}}
		}},
		{base + "fw/stats/", func() any { return d.fwStats() }},
		{base + "industry/jobs/", func() any {
			start := stamp(week)
			return []obj{{"job_id": 1 + d.rng.Int64N(500_000_000), "installer_id": ceo, "facility_id": observer,
				"location_id": observer, "activity_id": 1, "blueprint_id": item + 2, "blueprint_type_id": 691,
				"blueprint_location_id": observer, "output_location_id": observer, "runs": 10, "status": "active",
				"duration": 36000, "start_date": start, "end_date": start.Add(10 * time.Hour)}}
		}},
		{base + "medals/issued/", func() any {
			return []obj{{"medal_id": 1 + d.rng.Int64N(100_000), "character_id": ceo, "reason": "For a million units of Veldspar.",
				"status": "public", "issuer_id": ceo, "issued_at": stamp(week)}}
		}},
		{base + "orders/", func() any {
			return []obj{{"duration": 90, "wallet_division": 1, "order_id": 5_000_000_000 + d.rng.Int64N(1_000_000_000),
				"type_id": 34, "region_id": 10000002, "location_id": 60003760, "range": "station", "price": 5.5,
				"volume_total": 100_000, "volume_remain": 40_000, "issued": stamp(week), "issued_by": ceo, "is_buy_order": true}}
		}},
		{base + "roles/history/", func() any {
			return []obj{{"character_id": ceo, "changed_at": stamp(week), "issuer_id": ceo, "role_type": "roles",
				"old_roles": []string{}, "new_roles": []string{"Director"}}}
		}},
		{fmt.Sprintf("%sstarbases/%d/", base, starbase), func() any {
			return obj{"fuel_bay_view": "starbase_fuel_technician_role", "fuel_bay_take": "starbase_fuel_technician_role",
				"anchor": "config_starbase_equipment_role", "unanchor": "config_starbase_equipment_role",
				"online": "config_starbase_equipment_role", "offline": "config_starbase_equipment_role",
				"allow_corporation_members": true, "allow_alliance_members": false, "use_alliance_standings": true,
				"attack_if_other_security_status_dropping": false, "attack_if_at_war": true}
		}},
	}
}
