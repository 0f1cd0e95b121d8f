// Package indexertest builds real snapshots and real index generations in
// temporary directories, for the tests of the packages downstream.
package indexertest

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/snapshots"
	"gds/snapshots/disk/disktest"
	"gds/snapshots/synth"
)

// Records are the records of a test snapshot, by kind, in any order.
type Records map[snapshots.Kind][]snapshots.Record

// Snapshot writes recs as a snapshot under a temporary directory and
// returns its path.
func Snapshot(t testing.TB, recs Records) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snapshot")
	w, err := snapshots.Create(dir, snapshots.CreateOptions{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range snapshots.Kinds {
		list := slices.Clone(recs[kind])
		slices.SortFunc(list, func(a, b snapshots.Record) int {
			switch {
			case a.Key() < b.Key():
				return -1
			case a.Key() > b.Key():
				return 1
			}
			return 0
		})
		for _, r := range list {
			if err := w.Add(kind, r); err != nil {
				w.Abort()
				t.Fatal(err)
			}
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Generated writes the synthetic snapshot cfg describes under a
// temporary directory (its path is the snapshot's Dir).
func Generated(t testing.TB, cfg synth.Config) *snapshots.Snapshot {
	t.Helper()
	snap, err := synth.Generate(context.Background(), filepath.Join(t.TempDir(), "snapshot"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// Manager opens a Manager on a temporary data directory, builds snapshot
// and returns it with its generation live; it is closed when the test ends.
func Manager(t testing.TB, snapshot string) *indexer.Manager {
	t.Helper()
	_, m := ServedData(t, snapshot)
	return m
}

// ServedData builds snapshot into a temporary data directory and returns
// it with its Manager still open (closed when the test ends), as a running
// gds serve holds it.
func ServedData(t testing.TB, snapshot string) (string, *indexer.Manager) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := indexer.Open(indexer.Options{DataDir: dir, Logger: zerolog.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	Build(t, m, indexer.BuildRequest{Snapshot: snapshot, Trigger: "test"})
	return dir, m
}

// Build runs req on m and returns its result, failing t when the build
// fails.
func Build(t testing.TB, m *indexer.Manager, req indexer.BuildRequest) indexer.BuildResult {
	t.Helper()
	res, err := m.Build(context.Background(), req)
	if err != nil {
		t.Fatalf("build %s: %v", req.Snapshot, err)
	}
	return res
}

// JitaAmarr writes a small snapshot: two characters of one corporation
// ("Jita Trader", "Amarr Navy Pilot") and the solar systems Jita and Amarr,
// for tests of what a generation answers.
func JitaAmarr(t testing.TB) string {
	t.Helper()
	return Snapshot(t, Records{
		snapshots.Characters: {
			&snapshots.Character{Entity: Named(90000001, "Jita Trader"), CorporationID: 98000001},
			&snapshots.Character{Entity: Named(90000002, "Amarr Navy Pilot"), CorporationID: 98000001},
		},
		snapshots.SolarSystems: {
			&snapshots.SolarSystem{Entity: Named(30000142, "Jita"), ConstellationID: 20000020},
			&snapshots.SolarSystem{Entity: Named(30002187, "Amarr"), ConstellationID: 20000322},
		},
	})
}

// Characters are characters of the corporation corp, named by ID.
func Characters(corp int64, names map[int64]string) []snapshots.Record {
	out := make([]snapshots.Record, 0, len(names))
	for id, name := range names {
		out = append(out, &snapshots.Character{Entity: Named(id, name), CorporationID: corp})
	}
	return out
}

// Named returns an Entity with the given ID and name.
func Named(id int64, name string) snapshots.Entity { return snapshots.Entity{ID: id, Name: name} }

// EditMeta rewrites the generation.json of the generation in dir with
// edit applied to its fields, as another gds (or an older one) would have
// written it.
func EditMeta(t testing.TB, dir string, edit func(meta map[string]any)) {
	t.Helper()
	disktest.EditJSON(t, filepath.Join(dir, indexer.MetaFile), edit)
}
