//go:build unix

package indexer_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

// A data directory holds access lists, roles and corporation documents:
// it is created 0700 and every file in it is 0600, even under umask 0
// (bleve, for one, creates some files as the umask allows). Both a full
// and an incremental build are checked.
func TestDataDirIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	data := filepath.Join(t.TempDir(), "data")
	m := open(t, data)
	defer m.Close()
	recs := func(n int) indexertest.Records {
		return indexertest.Records{
			snapshots.Characters: characters(n, func(i int) string { return fmt.Sprintf("Perm %d", i) }),
			snapshots.SolarSystems: {
				&snapshots.SolarSystem{Entity: indexertest.Named(30000142, "Jita"), ConstellationID: 20000020},
			},
		}
	}
	build(t, m, indexertest.Snapshot(t, recs(50)), false)
	build(t, m, indexertest.Snapshot(t, recs(51)), false)
	var files int
	err := filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if got := info.Mode().Perm(); got != want {
			rel, _ := filepath.Rel(data, path)
			t.Errorf("%s is %#o, want %#o", rel, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("only %d files under %s: the builds wrote less than expected", files, data)
	}
}
