package synth

import (
	"path/filepath"
	"testing"

	"gds/snapshots"
)

// Rename renames every every-th character and copies everything else,
// other kinds included, as it stands.
func TestRename(t *testing.T) {
	cfg := smallConfig()
	cfg.Characters, cfg.Corporations, cfg.Alliances, cfg.Structures = 300, 30, 4, 50
	snap := generate(t, cfg)
	dir := filepath.Join(t.TempDir(), "renamed")
	if err := Rename(snap, dir, "renamed", 3, func(name string) string { return name + " X" }); err != nil {
		t.Fatal(err)
	}
	got, err := snapshots.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Manifest.Source != "renamed" || !got.Manifest.Created.Equal(snap.Manifest.Created) {
		t.Errorf("manifest source %q created %s, want %q %s", got.Manifest.Source, got.Manifest.Created, "renamed", snap.Manifest.Created)
	}
	was, now := all[*snapshots.Character](t, snap, snapshots.Characters), all[*snapshots.Character](t, got, snapshots.Characters)
	if len(now) != len(was) {
		t.Fatalf("%d characters, want %d", len(now), len(was))
	}
	for i := range was {
		want := was[i].Name
		if (i+1)%3 == 0 {
			want += " X"
		}
		if now[i].ID != was[i].ID || now[i].Name != want {
			t.Errorf("character %d: %d %q, want %d %q", i, now[i].ID, now[i].Name, was[i].ID, want)
		}
	}
	for _, k := range snapshots.Kinds {
		if snap.Has(k) != got.Has(k) {
			t.Errorf("%s: in the copy %v, want %v", k, got.Has(k), snap.Has(k))
		}
		if k == snapshots.Characters || !snap.Has(k) {
			continue
		}
		if a, b := len(all[snapshots.Record](t, snap, k)), len(all[snapshots.Record](t, got, k)); a != b {
			t.Errorf("%s: %d records, want %d", k, b, a)
		}
	}
}
