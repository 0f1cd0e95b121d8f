package indexer_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// tablesOnlyRecords are n characters with corporations, alliances for some
// and birthdays, and a few corporations; gen changes some and removes some.
func tablesOnlyRecords(n, gen int) indexertest.Records {
	recs := indexertest.Records{}
	day := time.Date(2010, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		if gen > 0 && i%41 == 0 {
			continue
		}
		c := &snapshots.Character{Entity: indexertest.Named(90000000+int64(i), "Pilot "+string(rune('a'+i%26))),
			CorporationID: 98000000 + int64(i%9)}
		if gen > 0 && i%53 == 0 {
			c.CorporationID = 1000001 // moved to an NPC corporation
		}
		if i%3 == 0 {
			c.AllianceID = 99000000 + int64(i%5)
		}
		b := day.AddDate(0, 0, i)
		c.Birthday = &b
		recs[snapshots.Characters] = append(recs[snapshots.Characters], c)
	}
	for i := range 9 {
		recs[snapshots.Corporations] = append(recs[snapshots.Corporations], &snapshots.Corporation{
			Entity: indexertest.Named(98000000+int64(i), "Corp "+string(rune('a'+i))), Ticker: "C" + string(rune('A'+i)), MemberCount: int64(i)})
	}
	return recs
}

// A build leaves characters out of bleve: no shards, the tables answer
// them (Generation.TablesAnswer), their ID keywords are in value columns
// with every record's value, through a full and an incremental build
// (delta columns); with Options.BleveCharacters the next build indexes
// them in bleve again, and without it leaves them out again.
func TestCharactersWithoutBleve(t *testing.T) {
	indexer.TablesOnlyForTest(t)
	data := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	build := func(gen int, bleveChars bool) *indexer.Generation {
		t.Helper()
		m, err := indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard), MaxIncrementalShare: 0.5, BleveCharacters: bleveChars})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		recs := tablesOnlyRecords(500, gen)
		if _, err := m.Build(ctx, indexer.BuildRequest{Snapshot: indexertest.Snapshot(t, recs), Trigger: "test"}); err != nil {
			t.Fatal(err)
		}
		g := m.Acquire()
		t.Cleanup(g.Release)
		want := map[string]map[int64]int64{"corporation_id": {}, "alliance_id": {}}
		for _, r := range recs[snapshots.Characters] {
			c := r.(*snapshots.Character)
			want["corporation_id"][c.ID] = c.CorporationID
			if c.AllianceID != 0 {
				want["alliance_id"][c.ID] = c.AllianceID
			}
		}
		if g.Meta.Deltas[snapshots.CategoryCharacter] == 0 { // a delta's values are checked through queries (package query)
			for field, w := range want {
				if got := g.ColumnValues("character", field); len(got) != len(w) {
					t.Fatalf("gen %d: %s column holds %d values, want %d", gen, field, len(got), len(w))
				} else {
					for id, v := range w {
						if got[id] != v {
							t.Fatalf("gen %d: %s of %d is %d in the column, %d in the record", gen, field, id, got[id], v)
						}
					}
				}
			}
		}
		return g
	}
	bleveDirs := func(g *indexer.Generation) []string {
		dirs, _ := filepath.Glob(filepath.Join(g.Dir(), "character", "bleve-*"))
		return dirs
	}

	g := build(0, false)
	if !g.TablesAnswer(snapshots.CategoryCharacter) || g.Meta.Shards[snapshots.CategoryCharacter] != 0 || len(bleveDirs(g)) > 0 {
		t.Fatalf("characters in bleve: shards %d, directories %v", g.Meta.Shards[snapshots.CategoryCharacter], bleveDirs(g))
	}
	if g.TablesAnswer(snapshots.CategoryCorporation) || !g.KeywordColumn("corporation_id", snapshots.CategoryCharacter) || g.KeywordColumn("ticker", snapshots.CategoryCorporation) {
		t.Fatal("the tables answer corporations, or keyword columns are missing or extra")
	}
	if idx, err := g.Index(snapshots.CategoryCharacter); err != nil || idx != nil {
		t.Fatalf("a bleve index of characters: %v, %v", idx, err)
	}

	g = build(1, false)
	if !g.Meta.Incremental || g.Meta.Deltas[snapshots.CategoryCharacter] == 0 || !g.TablesAnswer(snapshots.CategoryCharacter) {
		t.Fatalf("second build: incremental %v, character delta %d", g.Meta.Incremental, g.Meta.Deltas[snapshots.CategoryCharacter])
	}

	g = build(2, true)
	if g.TablesAnswer(snapshots.CategoryCharacter) || len(bleveDirs(g)) == 0 {
		t.Fatalf("with BleveCharacters: shards %d", g.Meta.Shards[snapshots.CategoryCharacter])
	}
	idx, err := g.Index(snapshots.CategoryCharacter)
	if err != nil || idx == nil {
		t.Fatalf("no bleve index of characters: %v", err)
	}
	if n, err := idx.DocCount(); err != nil || int(n) != g.Meta.Counts[snapshots.CategoryCharacter] {
		t.Fatalf("bleve holds %d characters (%v), the tables %d", n, err, g.Meta.Counts[snapshots.CategoryCharacter])
	}

	g = build(3, false)
	if !g.TablesAnswer(snapshots.CategoryCharacter) || len(bleveDirs(g)) > 0 {
		t.Fatalf("characters still in bleve after BleveCharacters went off")
	}
	if _, err := os.Stat(filepath.Join(g.Dir(), "character", indexer.ColumnsPath("base.tbl"))); err != nil {
		t.Fatal(err)
	}
}
