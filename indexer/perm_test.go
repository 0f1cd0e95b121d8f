//go:build unix

package indexer_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"gds/indexer/indexertest"
	"gds/snapshots"
	"gds/snapshots/disk/disktest"
)

// A data directory holds access lists, roles and corporation documents:
// it is created 0700 and every file in it is 0600, even under umask 0
// (bleve, for one, creates some files as the umask allows). Both a full
// and an incremental build are checked.
func TestDataDirIsPrivate(t *testing.T) {
	disktest.ZeroUmask(t)
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
	files := len(disktest.AssertPrivate(t, data))
	if files < 10 {
		t.Fatalf("only %d files under %s: the builds wrote less than expected", files, data)
	}
}
