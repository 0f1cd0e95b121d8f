package indexer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query/analyst"
	"gds/snapshots"
)

// types are a frigate, a cruiser and a mineral, with their group's
// category when withCategory is set (what import-sde writes), without it
// as snapshots written before category_id existed.
func types(withCategory bool) []snapshots.Record {
	ty := func(id, group, cat int64, name string) *snapshots.Type {
		t := &snapshots.Type{Entity: indexertest.Named(id, name), GroupID: group, Published: true}
		if withCategory {
			t.CategoryID = cat
		}
		return t
	}
	return []snapshots.Record{ty(34, 18, 4, "Tritanium"), ty(587, 25, 6, "Rifter"), ty(621, 26, 6, "Caracal")}
}

// setFieldsLayout rewrites a generation's meta as a build of another
// fields layout would have written it.
func setFieldsLayout(t *testing.T, data string, gen uint64, layout int) {
	t.Helper()
	setMeta(t, filepath.Join(data, "generations", fmt.Sprintf("%06d", gen)), "fields", layout)
}

// A generation of the layout before category_id is indexed again in full,
// even from the very snapshot it was built from, and then answers
// category_id queries and facets; types without a category lack the field.
func TestOlderFieldsLayoutIsRebuilt(t *testing.T) {
	data := t.TempDir()
	snap := indexertest.Snapshot(t, indexertest.Records{snapshots.Types: types(true)})
	m := open(t, data)
	first := build(t, m, snap, false)
	if live := m.Live(); live.Fields != indexer.FieldsVersion {
		t.Fatalf("new generation records fields layout %d, want %d", live.Fields, indexer.FieldsVersion)
	}
	m.Close()
	setFieldsLayout(t, data, first.Generation, indexer.FieldsVersion-1)

	m2 := rebuiltInFull(t, data, snap, first, "a fields layout change")
	defer m2.Close()
	if live := m2.Live(); live.Fields != indexer.FieldsVersion {
		t.Errorf("rebuilt generation records fields layout %d", live.Fields)
	}
	a := analyst.New(m2)
	res, err := a.Query(context.Background(), analyst.Request{Query: "category_id:6", Limit: 10,
		Sort: []string{"id"}, Fields: []string{"category_id", "group_id"}, Facets: []string{"category_id"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || len(res.Hits) != 2 || res.Hits[0].ID != 587 || res.Hits[1].ID != 621 ||
		res.Hits[0].Fields["category_id"] != int64(6) || res.Hits[1].Fields["group_id"] != int64(26) {
		t.Errorf("category_id:6: %+v", res.Hits)
	}
	if len(res.Facets) != 1 || len(res.Facets[0].Buckets) != 1 || res.Facets[0].Buckets[0].Term != "6" || res.Facets[0].Buckets[0].Count != 2 {
		t.Errorf("category_id facet over ships: %+v", res.Facets)
	}

	// A snapshot without category_id (still valid) indexes types without it.
	old := indexertest.Snapshot(t, indexertest.Records{snapshots.Types: types(false)})
	build(t, m2, old, false)
	for q, want := range map[string]uint64{"category_id:*": 0, "group_id:25": 1, "name:rifter": 1} {
		res, err := a.Query(context.Background(), analyst.Request{Query: q, Category: snapshots.CategoryInventoryType})
		if err != nil || res.Total != want {
			t.Errorf("%s over types without a category: %v hits (err %v), want %d", q, res, err, want)
		}
	}
}

// A follower does not adopt a generation it would answer wrongly: one of
// a newer analysts' layout, or folded another way. It says why, keeps
// serving its own, and adopts the same files once they are readable.
func TestAdoptRefusesUnreadableLayouts(t *testing.T) {
	snap := indexertest.Snapshot(t, indexertest.Records{snapshots.Types: types(true)})
	indexerData, replicaData := t.TempDir(), t.TempDir()
	m := open(t, indexerData)
	build(t, m, snap, false)
	pub := build(t, m, snap, true) // generation 2, to adopt
	m.Close()
	replica := open(t, replicaData)
	defer replica.Close()
	own := build(t, replica, snap, false)

	for _, c := range []struct {
		key  string
		val  int
		want string
	}{{"fields", indexer.FieldsVersion + 1, "newer than this gds reads"}, {"fold", 99, "folded by version 99"}} {
		src := filepath.Join(indexerData, "generations", fmt.Sprintf("%06d", pub.Generation))
		dir := filepath.Join(replicaData, "incoming-"+c.key)
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		setMeta(t, dir, c.key, c.val)
		_, err := replica.Adopt(context.Background(), dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s %d: adopt error %v, want one saying %q", c.key, c.val, err, c.want)
		}
		if live := replica.Live(); live.ID != own.Generation {
			t.Fatalf("%s %d: live generation %d after the refusal, want %d", c.key, c.val, live.ID, own.Generation)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s: the refused files are gone: %v", c.key, err)
		}
	}
	dir := filepath.Join(replicaData, "incoming-fields")
	setMeta(t, dir, "fields", indexer.FieldsVersion-1)
	if meta, err := replica.Adopt(context.Background(), dir); err != nil || meta.ID != pub.Generation {
		t.Fatalf("adopting an older layout: %v, %v", meta.ID, err)
	}
}

func setMeta(t *testing.T, dir, key string, val int) {
	t.Helper()
	indexertest.EditMeta(t, dir, func(meta map[string]any) { meta[key] = val })
}
