package indexer_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/affcol"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// affWorld is a population of characters, agents, corporations and
// alliances for a chain of builds.
type affWorld struct {
	rng   *rand.Rand
	chars map[int64]*snapshots.Character
	corps map[int64]*snapshots.Corporation
}

func newAffWorld(n int) *affWorld {
	w := &affWorld{rng: rand.New(rand.NewPCG(3, 4)), chars: map[int64]*snapshots.Character{}, corps: map[int64]*snapshots.Corporation{}}
	for i := range 40 {
		id := int64(98000001 + i)
		c := &snapshots.Corporation{Entity: indexertest.Named(id, fmt.Sprintf("Corp %d", i)), Ticker: fmt.Sprintf("C%d", i)}
		if i%4 == 0 {
			c.AllianceID = int64(99000001 + i%3)
		}
		if i%5 == 0 {
			c.FactionID = 500001 + int64(i%4)
		}
		w.corps[id] = c
	}
	for i := range n {
		w.setCharacter(int64(2112000001+i), fmt.Sprintf("Pilot %d", i))
	}
	return w
}

// setCharacter (re)places a character in a random corporation.
func (w *affWorld) setCharacter(id int64, name string) {
	corp := w.corps[int64(98000001+w.rng.IntN(len(w.corps)))]
	c := &snapshots.Character{Entity: indexertest.Named(id, name), CorporationID: corp.ID, AllianceID: corp.AllianceID}
	if w.rng.IntN(7) == 0 {
		c.FactionID = 500001 + int64(w.rng.IntN(4))
	}
	w.chars[id] = c
}

func (w *affWorld) snapshot(t *testing.T) string {
	recs := indexertest.Records{
		snapshots.Agents: {&snapshots.Agent{Entity: indexertest.Named(3008416, "Agent Smith"), CorporationID: 98000001}},
		snapshots.Alliances: {
			&snapshots.Alliance{Entity: indexertest.Named(99000001, "Alliance One"), Ticker: "A1"},
			&snapshots.Alliance{Entity: indexertest.Named(99000002, "Alliance Two"), Ticker: "A2"},
			&snapshots.Alliance{Entity: indexertest.Named(99000003, "Alliance Three"), Ticker: "A3"},
		},
	}
	for _, c := range w.chars {
		cc := *c
		recs[snapshots.Characters] = append(recs[snapshots.Characters], &cc)
	}
	for _, c := range w.corps {
		cc := *c
		recs[snapshots.Corporations] = append(recs[snapshots.Corporations], &cc)
	}
	return indexertest.Snapshot(t, recs)
}

// checkColumns: for every record of every kind with a column, the
// column's row is what the record says (affRow; that those rows answer as
// the records do is query's TestColumnsAnswerAsRecords).
func checkColumns(t *testing.T, m *indexer.Manager) {
	t.Helper()
	g := m.Acquire()
	defer g.Release()
	for _, kind := range []snapshots.Kind{snapshots.Characters, snapshots.Agents, snapshots.Corporations, snapshots.Alliances} {
		s, c := g.Store(kind), g.Affiliations(kind)
		if c == nil || c.Len() != s.Len() {
			t.Fatalf("%s: no column, or not one row per record", kind)
		}
		for i := range s.Len() {
			rec := kind.New()
			if err := s.Read(i, func(raw []byte) error { return snapshots.DecodeRecord(raw, rec) }); err != nil {
				t.Fatal(err)
			}
			got, err := c.Row(i)
			if err != nil {
				t.Fatal(err)
			}
			if want := indexer.AffRow(rec); got != want {
				t.Fatalf("%s %d: column %+v, record %+v", kind, s.Key(i), got, want)
			}
		}
	}
}

// TestAffiliationColumns follows the columns through every kind of
// build: full; patched (characters renamed, moved between corporations,
// added and removed; a corporation changing faction and alliance), which
// writes the characters' store as a delta; one where only corporations
// change (the characters' store and column hard-linked); full again.
func TestAffiliationColumns(t *testing.T) {
	w := newAffWorld(3000)
	m := indexertest.Manager(t, w.snapshot(t))
	checkColumns(t, m)

	for i := range 40 {
		id := int64(2112000001 + w.rng.IntN(3000))
		w.setCharacter(id, fmt.Sprintf("Renamed %d", i))
	}
	delete(w.chars, 2112000002)
	w.setCharacter(2112999999, "Newcomer")
	w.corps[98000002].FactionID, w.corps[98000002].AllianceID = 500004, 99000003
	res, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: w.snapshot(t), Trigger: "test"})
	if err != nil || !res.Incremental {
		t.Fatalf("patched build: %+v, %v", res, err)
	}
	g := m.Acquire()
	if s := g.Store(snapshots.Characters); s.DeltaShare() == 0 {
		t.Error("the characters' store was written whole, not as a delta")
	}
	g.Release()
	checkColumns(t, m)

	w.corps[98000003].FactionID = 500002
	before := recordFile(t, m, "characters"+affcol.Suffix)
	indexertest.Build(t, m, indexer.BuildRequest{Snapshot: w.snapshot(t), Trigger: "test"})
	checkColumns(t, m)
	if !os.SameFile(before, recordFile(t, m, "characters"+affcol.Suffix)) {
		t.Error("the characters' column of an unchanged file was not hard-linked")
	}
	g = m.Acquire()
	if s, c := g.Store(snapshots.Corporations), g.Affiliations(snapshots.Corporations); c != nil {
		p, _ := s.Find(98000003)
		if _, _, f := c.IDs(p); f != 500002 {
			t.Errorf("corporation 98000003's faction %d, want 500002", f)
		}
	}
	g.Release()

	indexertest.Build(t, m, indexer.BuildRequest{Snapshot: w.snapshot(t), Full: true, Trigger: "test"})
	checkColumns(t, m)
}

// TestAffiliationColumnsOlderGeneration: a generation without columns
// (an older build's) opens without them, and a build over it writes
// them, decoding the lines it skips.
func TestAffiliationColumnsOlderGeneration(t *testing.T) {
	w := newAffWorld(500)
	data := filepath.Join(t.TempDir(), "data")
	m, err := indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	indexertest.Build(t, m, indexer.BuildRequest{Snapshot: w.snapshot(t), Trigger: "test"})
	g := m.Acquire()
	dir := g.Dir()
	g.Release()
	m.Close()
	removeColumns(t, dir)
	if m, err = indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard)}); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g = m.Acquire()
	if g.Affiliations(snapshots.Characters) != nil {
		t.Fatal("a column without its file")
	}
	g.Release()
	w.setCharacter(2112000007, "Moved On")
	indexertest.Build(t, m, indexer.BuildRequest{Snapshot: w.snapshot(t), Trigger: "test"})
	checkColumns(t, m)
}

// removeColumns deletes a generation's affiliation columns, as an older
// build would have left it.
func removeColumns(t *testing.T, dir string) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "records", "*"+affcol.Suffix))
	if len(names) == 0 {
		t.Fatal("no affiliation columns written")
	}
	for _, n := range names {
		if err := os.Remove(n); err != nil {
			t.Fatal(err)
		}
	}
}

// recordFile is the live generation's file records/<name>; nil when it
// has none.
func recordFile(t *testing.T, m *indexer.Manager, name string) os.FileInfo {
	t.Helper()
	g := m.Acquire()
	defer g.Release()
	fi, err := os.Stat(filepath.Join(g.Dir(), "records", name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestIncrementalKeepsIndexAndColumnBases: an incremental build keeps the
// characters' record index and affiliation column of the full build
// (hard-linked, so a fleet's publisher uploads neither again) and writes
// their deltas beside them, small; the chain of builds after it keeps
// the same bases while lookups and columns answer as the records say, and
// once the store's delta passes its limit the store, its index and its
// column are written whole again, and the next build starts deltas over
// the new base.
func TestIncrementalKeepsIndexAndColumnBases(t *testing.T) {
	w := newAffWorld(4000)
	m := indexertest.Manager(t, w.snapshot(t))
	index, column := recordFile(t, m, "characters.idx"), recordFile(t, m, "characters"+affcol.Suffix)
	folded, split, after := false, 0, 0
	for round := range 8 {
		for i := range 100 { // 2.5%: patched, not rebuilt
			w.setCharacter(int64(2112000001+w.rng.IntN(4000)), fmt.Sprintf("Round %d pilot %d", round, i))
		}
		delete(w.chars, int64(2112000001+w.rng.IntN(4000)))
		w.setCharacter(int64(2112100000+round), "Newcomer")
		res, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: w.snapshot(t), Trigger: "test"})
		if err != nil || !res.Incremental {
			t.Fatalf("round %d: %+v, %v", round, res, err)
		}
		checkColumns(t, m)
		g := m.Acquire()
		s, c := g.Store(snapshots.Characters), g.Affiliations(snapshots.Characters)
		_, deltaRecords, ok := s.IndexDelta()
		g.Release()
		if !ok {
			// written whole: the new base of the next rounds
			if recordFile(t, m, "characters.idx-delta") != nil || recordFile(t, m, "characters"+affcol.DeltaSuffix) != nil || c.Delta() {
				t.Fatalf("round %d: a store written whole beside deltas", round)
			}
			folded = split > 0
			index, column = recordFile(t, m, "characters.idx"), recordFile(t, m, "characters"+affcol.Suffix)
			continue
		}
		split++
		if folded {
			after++
		}
		t.Logf("round %d: index delta of %d records", round, deltaRecords)
		if !c.Delta() || deltaRecords == 0 {
			t.Fatalf("round %d: the column is no delta (%v) beside an index delta of %d records", round, c.Delta(), deltaRecords)
		}
		if base := recordFile(t, m, "characters.idx-base"); base == nil || !os.SameFile(base, index) {
			t.Fatalf("round %d: the characters' index base is not the full build's index", round)
		}
		if base := recordFile(t, m, "characters"+affcol.Suffix); !os.SameFile(base, column) {
			t.Fatalf("round %d: the characters' column base is not the full build's column", round)
		}
		if recordFile(t, m, "characters.idx") != nil {
			t.Fatalf("round %d: an index written whole beside the index delta", round)
		}
		if d, b := recordFile(t, m, "characters.idx-delta").Size(), index.Size(); d*2 > b {
			t.Fatalf("round %d: index delta of %d bytes beside a base of %d", round, d, b)
		}
		if d, b := recordFile(t, m, "characters"+affcol.DeltaSuffix).Size(), column.Size(); d*2 > b {
			t.Fatalf("round %d: column delta of %d bytes beside a base of %d", round, d, b)
		}
	}
	if !folded || split < 2 || after == 0 {
		t.Errorf("the chain wrote %d index deltas, folded them (%v) and wrote %d after; want all three", split, folded, after)
	}
}
