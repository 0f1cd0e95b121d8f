package indexer_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"gds/indexer/indexertest"
	"gds/indexer/nametable"
	"gds/snapshots"
)

// Names with "İ" are found by plain letters through the name tables (the
// searches) and through bleve (the analysts), at index and query time alike.
func TestDottedCapitalIFoldsToPlainI(t *testing.T) {
	m := indexertest.Manager(t, indexertest.Snapshot(t, indexertest.Records{
		snapshots.Characters: {
			&snapshots.Character{Entity: indexertest.Named(90000001, "İlkay Yılmaz"), CorporationID: 98000001},
			&snapshots.Character{Entity: indexertest.Named(90000002, "Ilkay Pilot"), CorporationID: 98000001},
		},
	}))
	got := searchAll(t, m, []string{"ilkay", "ILKAY", "İlkay", "ilkay yılmaz"})
	for key, want := range map[string]int{"ilkay/false": 2, "ILKAY/false": 2, "İlkay/false": 2, "ilkay yılmaz/true": 1} {
		if len(got[key]) != want {
			t.Errorf("search %s: %v, want %d hits", key, got[key], want)
		}
	}
	g := m.Acquire()
	defer g.Release()
	for _, q := range []string{"words:ilkay", "name:ilkay*", "words:İLKAY"} {
		hits, err := analystQuery(g, q, snapshots.CategoryCharacter, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 {
			t.Errorf("analyst query %q: %d hits, want 2", q, len(hits))
		}
	}
}

// A generation built with an older fold is rebuilt in full, even from the
// very snapshot it was built from: its tables hold names folded otherwise.
func TestOlderFoldIsRebuilt(t *testing.T) {
	data := t.TempDir()
	snap := pilots(t, 20, "İlkay")
	m := open(t, data)
	first := build(t, m, snap, false)
	if live := m.Live(); live.Fold != nametable.FoldVersion {
		t.Fatalf("new generation records fold %d, want %d", live.Fold, nametable.FoldVersion)
	}
	m.Close()

	// Make it look like a generation of the first fold (no "fold" field).
	indexertest.EditMeta(t, filepath.Join(data, "generations", fmt.Sprintf("%06d", first.Generation)),
		func(meta map[string]any) { delete(meta, "fold") })

	m2 := rebuiltInFull(t, data, snap, first, "a fold change")
	defer m2.Close()
	if live := m2.Live(); live.Fold != nametable.FoldVersion {
		t.Errorf("rebuilt generation records fold %d", live.Fold)
	}
	if got := searchAll(t, m2, []string{"ilkay"}); len(got["ilkay/false"]) != 20 {
		t.Errorf("search after the rebuild: %v", got)
	}
}
