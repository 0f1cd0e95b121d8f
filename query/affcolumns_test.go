package query_test

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/affcol"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
	"gds/snapshots/synth"
)

// TestColumnsAnswerAsRecords: over a generated snapshot, the affiliations
// of every character and agent, and locals of its names, are the same
// answered from the affiliation columns as from the records (the same
// generation with its columns removed, as an older build wrote it).
func TestColumnsAnswerAsRecords(t *testing.T) {
	snap := indexertest.Generated(t, synth.Config{
		Characters: 3000, Corporations: 60, Alliances: 6, Structures: 10, Seed: 11,
	})
	dir := snap.Dir
	var ids []int64
	var names []string
	for _, kind := range []snapshots.Kind{snapshots.Characters, snapshots.Agents} {
		err := snap.Each(kind, func(rec snapshots.Record, _ snapshots.Line) error {
			ids = append(ids, rec.Key())
			if kind == snapshots.Characters && len(names) < query.MaxLocalNames-1 {
				names = append(names, rec.(snapshots.Named).DisplayName())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	names = append(names, "Nobody At All")
	if got := compareWithoutColumns(t, dir, ids, names); got.alliances == 0 {
		t.Fatal("the snapshot tests too little: no alliances")
	}
	// Factions (the synthetic snapshot has none), an NPC corporation with
	// localized names, an agent.
	got := compareWithoutColumns(t, indexertest.Snapshot(t, affiliationRecords()),
		[]int64{2112000001, 2112000002, 2112000003, 2112000004, 3008416}, []string{"navy cadet", "Ally Member", "Lost Soul"})
	if got.factions == 0 {
		t.Fatal("no faction answered")
	}
}

// compareWithoutColumns builds snapshot, asks for the affiliations of ids
// and locals of names, then removes the generation's columns, opens it
// again and checks it answers the same. It returns how many affiliations
// had an alliance and a faction.
func compareWithoutColumns(t *testing.T, snapshot string, ids []int64, names []string) (n struct{ alliances, factions int }) {
	t.Helper()
	m := indexertest.Manager(t, snapshot)
	g := m.Acquire()
	gdir := g.Dir()
	if g.Affiliations(snapshots.Characters) == nil || g.Affiliations(snapshots.Corporations) == nil {
		t.Fatal("the build wrote no affiliation columns")
	}
	g.Release()
	withCols := answers(t, query.New(m), ids, names)
	for _, batch := range withCols.affs {
		for _, a := range batch {
			n.alliances += min(int(a.AllianceID), 1)
			n.factions += min(int(a.FactionID), 1)
		}
	}
	m.Close()

	cols, _ := filepath.Glob(filepath.Join(gdir, "records", "*"+affcol.Suffix))
	for _, c := range cols {
		if err := os.Remove(c); err != nil {
			t.Fatal(err)
		}
	}
	m2, err := indexer.Open(indexer.Options{DataDir: filepath.Dir(filepath.Dir(gdir)), Logger: zerolog.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if g := m2.Acquire(); g == nil || g.Affiliations(snapshots.Characters) != nil {
		t.Fatal("no generation, or columns without their files")
	} else {
		g.Release()
	}
	s2 := query.New(m2)
	query.LocalDirsNowForTest(s2)
	if fromRecords := answers(t, s2, ids, names); !reflect.DeepEqual(withCols, fromRecords) {
		t.Errorf("answers differ:\ncolumns %+v\nrecords %+v", withCols, fromRecords)
	}
	return n
}

type answered struct {
	affs   [][]query.Affiliation
	locals []query.Local
}

// answers asks s the affiliations of ids in batches of 1,000 and the
// local of names, whole and in halves.
func answers(t *testing.T, s *query.Searcher, ids []int64, names []string) answered {
	t.Helper()
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var a answered
	for lo := 0; lo < len(ids); lo += 1000 {
		got, missing, err := v.Affiliations(ids[lo:min(lo+1000, len(ids))], nil)
		if err != nil || missing >= 0 {
			t.Fatalf("missing %d, %v", missing, err)
		}
		a.affs = append(a.affs, got)
	}
	for _, list := range [][]string{names, names[:len(names)/2], names[len(names)/2:]} {
		l, err := v.Local(list)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Characters) == 0 || len(l.Corporations) == 0 || len(l.Unknown) > 1 {
			t.Fatalf("a local of %d names: %d characters, %d corporations, %d unknown", len(list), len(l.Characters), len(l.Corporations), len(l.Unknown))
		}
		a.locals = append(a.locals, l)
	}
	return a
}
