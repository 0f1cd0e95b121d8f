package query_test

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gds/indexer/indexertest"
	"gds/indexer/nametable"
	"gds/query"
	"gds/snapshots"
	"gds/snapshots/synth"
)

// TestLocalMatchesSnapshot is the property test of View.Local: for random
// locals drawn from a generated snapshot (names in random case, repeated,
// mixed with names of no character), the answer's characters, groups and
// unknown names equal a count made from the snapshot's records directly.
// It runs before the corporations' directory is read (record stores) and
// after (the directory).
func TestLocalMatchesSnapshot(t *testing.T) {
	snap := indexertest.Generated(t, synth.Config{
		Characters: 3000, Corporations: 120, Alliances: 12, Structures: 10, Seed: 11,
	})
	chars := map[int64]*snapshots.Character{}
	byName := map[string][]int64{} // folded name → characters
	var names []string
	corps := map[int64]*snapshots.Corporation{}
	alliances := map[int64]*snapshots.Alliance{}
	each := func(k snapshots.Kind, fn func(snapshots.Record)) {
		if err := snap.Each(k, func(rec snapshots.Record, _ snapshots.Line) error { fn(rec); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	each(snapshots.Characters, func(r snapshots.Record) {
		c := r.(*snapshots.Character)
		chars[c.ID] = c
		f := nametable.Fold(c.Name)
		byName[f] = append(byName[f], c.ID)
		names = append(names, c.Name)
	})
	each(snapshots.Corporations, func(r snapshots.Record) { c := r.(*snapshots.Corporation); corps[c.ID] = c })
	each(snapshots.Alliances, func(r snapshots.Record) { a := r.(*snapshots.Alliance); alliances[a.ID] = a })

	s := query.New(indexertest.Manager(t, snap.Dir))
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 40 {
		if round == 20 {
			query.LocalDirsNowForTest(s)
		}
		size := 1 + rng.IntN(300)
		if round%10 == 9 {
			size = query.MaxLocalNames
		}
		var paste []string
		for range size {
			switch r := rng.IntN(20); {
			case r == 0:
				paste = append(paste, "Nobody "+strings.Repeat("x", 1+rng.IntN(5)))
			case r == 1 && len(paste) > 0:
				paste = append(paste, paste[rng.IntN(len(paste))])
			case r == 2:
				paste = append(paste, strings.ToUpper(names[rng.IntN(len(names))]))
			default:
				paste = append(paste, "  "+names[rng.IntN(len(names))]+"\t")
			}
		}
		v, err := s.View()
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Local(paste)
		v.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := countLocal(paste, byName, chars, corps, alliances)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d (%d names): Local differs from the snapshot's count\n got %+v\nwant %+v", round, size, got, want)
		}
	}
}

// countLocal is the breakdown of paste made from the snapshot's records.
func countLocal(paste []string, byName map[string][]int64, chars map[int64]*snapshots.Character,
	corps map[int64]*snapshots.Corporation, alliances map[int64]*snapshots.Alliance) query.Local {
	out := query.Local{Characters: []query.LocalCharacter{}, Corporations: []query.LocalCorporation{},
		Alliances: []query.LocalAlliance{}, Unknown: []string{}}
	in := map[int64]bool{}
	for _, p := range paste {
		p = strings.TrimSpace(p)
		ids := slices.Sorted(slices.Values(byName[nametable.Fold(p)]))
		ids = ids[:min(len(ids), query.MaxLocalNamesakes)]
		if len(ids) == 0 && !slices.Contains(out.Unknown, p) {
			out.Unknown = append(out.Unknown, p)
		}
		for _, id := range ids {
			in[id] = true
		}
	}
	corpCount, allianceCount := map[int64]int{}, map[int64]int{}
	for id := range in {
		c := chars[id]
		out.Characters = append(out.Characters, query.LocalCharacter{CharacterID: id, Name: c.Name,
			CorporationID: c.CorporationID, AllianceID: c.AllianceID, FactionID: c.FactionID})
		corpCount[c.CorporationID]++
		if c.AllianceID != 0 {
			allianceCount[c.AllianceID]++
		}
	}
	for id, n := range corpCount {
		lc := query.LocalCorporation{CorporationID: id, Count: n}
		if c := corps[id]; c != nil {
			lc.Name, lc.Ticker, lc.AllianceID = c.Name, c.Ticker, c.AllianceID
		}
		out.Corporations = append(out.Corporations, lc)
	}
	for id, n := range allianceCount {
		la := query.LocalAlliance{AllianceID: id, Count: n}
		if a := alliances[id]; a != nil {
			la.Name, la.Ticker = a.Name, a.Ticker
		}
		out.Alliances = append(out.Alliances, la)
	}
	slices.SortFunc(out.Characters, func(a, b query.LocalCharacter) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.CharacterID, b.CharacterID))
	})
	slices.SortFunc(out.Corporations, func(a, b query.LocalCorporation) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name), cmp.Compare(a.CorporationID, b.CorporationID))
	})
	slices.SortFunc(out.Alliances, func(a, b query.LocalAlliance) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name), cmp.Compare(a.AllianceID, b.AllianceID))
	})
	return out
}
