package indexer_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

// A full build writes a search category's record store in a second pass
// over its file, beside its tables: every store then holds each line of
// the snapshot byte for byte under its key, and the structures' groups by
// corporation, in a first build and in a full rebuild over a generation.
func TestFullBuildStoresEqualTheSnapshot(t *testing.T) {
	recs := indexertest.Records{
		snapshots.Characters: characters(3000, func(i int) string { return fmt.Sprintf("Pilot %d of the second pass", i) }),
		snapshots.Roles:      nil,
	}
	var structs []snapshots.Record
	corpOf := map[int64]int64{}
	for i := range 120 {
		id, corp := int64(1035466617000+i), int64(98000001+i%7)
		corpOf[id] = corp
		structs = append(structs, &snapshots.Structure{ID: id, Name: fmt.Sprintf("Keepstar %d", i), TypeID: 35834,
			CorporationID: corp, SystemID: 30000142, State: "shield_vulnerable"})
	}
	recs[snapshots.Structures] = structs
	for i := range 500 {
		recs[snapshots.Roles] = append(recs[snapshots.Roles], &snapshots.CharacterRoles{CharacterID: int64(90000000 + i),
			CorporationID: 98000001, Roles: []string{"Director"}})
	}
	snap := indexertest.Snapshot(t, recs)
	m := open(t, filepath.Join(t.TempDir(), "data"))
	defer m.Close()
	for _, full := range []bool{false, true} {
		build(t, m, snap, full)
		g := m.Acquire()
		for _, kind := range []snapshots.Kind{snapshots.Characters, snapshots.Structures, snapshots.Roles} {
			s := g.Store(kind)
			lines := snapshotLines(t, snap, kind)
			if s == nil || s.Len() != len(lines) {
				t.Fatalf("full=%v: %s store holds %v records, want %d", full, kind, s, len(lines))
			}
			for i, line := range lines {
				var got []byte
				if err := s.Read(i, func(raw []byte) error { got = slices.Clone(raw); return nil }); err != nil {
					t.Fatalf("full=%v: %s record %d: %v", full, kind, i, err)
				}
				if string(got) != line {
					t.Fatalf("full=%v: %s record %d = %q, want %q", full, kind, i, got, line)
				}
			}
		}
		s := g.Store(snapshots.Structures)
		for corp := int64(98000001); corp < 98000008; corp++ {
			pos := s.Group("corporation", corp)
			if len(pos) == 0 {
				t.Errorf("full=%v: no structures of corporation %d", full, corp)
			}
			for _, p := range pos {
				if id := s.Key(p); corpOf[id] != corp {
					t.Errorf("full=%v: structure %d listed under corporation %d, belongs to %d", full, id, corp, corpOf[id])
				}
			}
		}
		g.Release()
	}
}

// snapshotLines returns kind's lines as the snapshot file holds them.
func snapshotLines(t *testing.T, dir string, kind snapshots.Kind) []string {
	t.Helper()
	snap, err := snapshots.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, snap.Manifest.Files[kind].Path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(f.Name(), ".zst") {
		zr, err := zstd.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
