package query_test

import (
	"slices"
	"testing"

	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

// affiliationRecords: a player in an alliance, one without, one of an
// NPC corporation in a faction (its record with localized names, which
// the fast reader declines), an agent, and a character whose corporation
// the snapshot lacks.
func affiliationRecords() indexertest.Records {
	return indexertest.Records{
		snapshots.Characters: {
			&snapshots.Character{Entity: indexertest.Named(2112000001, "Ally Member"), CorporationID: 98000001, AllianceID: 99000001},
			&snapshots.Character{Entity: indexertest.Named(2112000002, "Solo Pilot"), CorporationID: 98000002},
			&snapshots.Character{Entity: indexertest.Named(2112000003, "Navy Cadet"), CorporationID: 1000035},
			&snapshots.Character{Entity: indexertest.Named(2112000004, "Lost Soul"), CorporationID: 98000999},
		},
		snapshots.Agents: {&snapshots.Agent{Entity: indexertest.Named(3008416, "Agent Smith"), CorporationID: 1000035}},
		snapshots.Corporations: {
			&snapshots.Corporation{Entity: indexertest.Named(98000001, "Allied Corp"), Ticker: "AC", AllianceID: 99000001},
			&snapshots.Corporation{Entity: indexertest.Named(98000002, "Solo Corp"), Ticker: "SC"},
			&snapshots.Corporation{Entity: snapshots.Entity{ID: 1000035, Name: "Caldari Navy",
				Names: snapshots.Localized{"de": "Caldari-Marine"}}, Ticker: "CN", FactionID: 500001, NPC: true},
		},
	}
}

func TestAffiliations(t *testing.T) {
	v, err := query.New(indexertest.Manager(t, indexertest.Snapshot(t, affiliationRecords()))).View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ids := []int64{2112000003, 2112000001, 3008416, 2112000002, 2112000004}
	got, missing, err := v.Affiliations(ids, nil)
	if err != nil || missing != -1 {
		t.Fatalf("missing %d, err %v", missing, err)
	}
	want := []query.Affiliation{
		{CharacterID: 2112000003, CorporationID: 1000035, FactionID: 500001},
		{CharacterID: 2112000001, CorporationID: 98000001, AllianceID: 99000001},
		{CharacterID: 3008416, CorporationID: 1000035, FactionID: 500001},
		{CharacterID: 2112000002, CorporationID: 98000002},
		{CharacterID: 2112000004, CorporationID: 98000999},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// One ID that is no character: its index, as ESI refuses the batch.
	for _, bad := range [][]int64{{2112000001, 98000001}, {500001}, {1}} {
		if _, missing, err := v.Affiliations(bad, nil); err != nil || missing != len(bad)-1 {
			t.Errorf("%v: missing %d, err %v", bad, missing, err)
		}
	}
}
