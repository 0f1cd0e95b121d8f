package fleet_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/fleet"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

var quiet = zerolog.New(io.Discard)

// names is a test data set: characters and corporations.
type names struct {
	chars map[int64]string
	corps map[int64]string
}

func newNames(n int) *names {
	d := &names{chars: map[int64]string{}, corps: map[int64]string{}}
	for i := range n {
		d.chars[int64(90000001+i)] = fmt.Sprintf("Pilot %d Kari", i)
	}
	for i := range n / 10 {
		d.corps[int64(98000001+i)] = fmt.Sprintf("Corp %d", i)
	}
	return d
}

func (d *names) snapshot(t *testing.T) string {
	t.Helper()
	recs := indexertest.Records{snapshots.Characters: indexertest.Characters(98000001, d.chars)}
	for id, name := range d.corps {
		recs[snapshots.Corporations] = append(recs[snapshots.Corporations],
			&snapshots.Corporation{Entity: indexertest.Named(id, name), Ticker: "T"})
	}
	return indexertest.Snapshot(t, recs)
}

func openManager(t *testing.T, data string) *indexer.Manager {
	t.Helper()
	m, err := indexer.Open(indexer.Options{DataDir: data, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func publish(t *testing.T, p *fleet.Publisher, m *indexer.Manager) fleet.PublishResult {
	t.Helper()
	g := m.Acquire()
	defer g.Release()
	res, err := p.Publish(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// check has fl check the bucket once; an error fails t.
func check(t *testing.T, fl *fleet.Follower) {
	t.Helper()
	if err := fl.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// fileHashes maps each file of a generation directory to its SHA-256.
func fileHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(name string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		raw, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, name)
		s := sha256.Sum256(raw)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func liveHashes(t *testing.T, m *indexer.Manager) (uint64, map[string]string) {
	t.Helper()
	g := m.Acquire()
	if g == nil {
		t.Fatal("no generation live")
	}
	defer g.Release()
	return g.Meta.ID, fileHashes(t, g.Dir())
}

// fixture is one indexer publishing to a file:// bucket and one replica.
type fixture struct {
	bucketDir string
	url       string
	indexer   *indexer.Manager
	pub       *fleet.Publisher
	replica   *indexer.Manager
	follower  *fleet.Follower
	data      *names
}

func newFixture(t *testing.T, keep int) *fixture {
	t.Helper()
	f := &fixture{bucketDir: filepath.Join(t.TempDir(), "bucket"), data: newNames(300)}
	f.url = "file://" + f.bucketDir + "?create_dir=1"
	f.indexer = openManager(t, filepath.Join(t.TempDir(), "indexer"))
	indexertest.Build(t, f.indexer, indexer.BuildRequest{Snapshot: f.data.snapshot(t), Trigger: "test"})
	var err error
	if f.pub, err = fleet.NewPublisher(context.Background(), f.url, keep, quiet); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.pub.Close() })
	f.replica = openManager(t, filepath.Join(t.TempDir(), "replica"))
	if f.follower, err = fleet.NewFollower(context.Background(), f.url, filepath.Join(t.TempDir(), "replica"), f.replica, time.Second, quiet); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.follower.Close() })
	return f
}

// newFollower is a replica on data directory data.
func (f *fixture) newReplica(t *testing.T, data string) (*indexer.Manager, *fleet.Follower) {
	t.Helper()
	m := openManager(t, data)
	fl, err := fleet.NewFollower(context.Background(), f.url, data, m, time.Second, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	return m, fl
}

// rename changes one character's name and rebuilds (incremental).
func (f *fixture) rename(t *testing.T, id int64, name string) indexer.BuildResult {
	t.Helper()
	f.data.chars[id] = name
	return indexertest.Build(t, f.indexer, indexer.BuildRequest{Snapshot: f.data.snapshot(t), Trigger: "test"})
}

func objectsIn(t *testing.T, bucketDir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(bucketDir, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".attrs") {
			out[e.Name()] = true
		}
	}
	return out
}

func distinct(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, s := range m {
		out[s] = true
	}
	return out
}

// TestPublishFollow: a full generation is uploaded whole and a replica
// ends up with the same files and metadata; an incremental one uploads
// exactly the objects whose content is new, and the replica downloads
// only those, reusing the rest from its live generation.
func TestPublishFollow(t *testing.T) {
	f := newFixture(t, 3)
	id1, files1 := liveHashes(t, f.indexer)
	res := publish(t, f.pub, f.indexer)
	if res.Generation != id1 || res.Files != len(files1) || res.Uploaded != len(distinct(files1)) || res.Uploaded == 0 {
		t.Fatalf("full publish: %+v, generation %d has %d files (%d distinct)", res, id1, len(files1), len(distinct(files1)))
	}
	if again := publish(t, f.pub, f.indexer); !again.Unchanged || again.Uploaded != 0 {
		t.Fatalf("publishing the same generation again: %+v", again)
	}
	if st := f.follower.Status(); st.Live != 0 {
		t.Fatalf("replica live before following: %+v", st)
	}
	check(t, f.follower)
	rid, rfiles := liveHashes(t, f.replica)
	if rid != id1 || fmt.Sprint(rfiles) != fmt.Sprint(files1) {
		t.Fatalf("replica has generation %d with %d files; want %d with %d identical files", rid, len(rfiles), id1, len(files1))
	}
	if a, b := f.indexer.Live(), f.replica.Live(); !a.Created.Equal(b.Created) || a.ID != b.ID {
		t.Fatalf("replica's meta %v/%v differs from the indexer's %v/%v", b.ID, b.Created, a.ID, a.Created)
	}

	res2 := f.rename(t, 90000007, "Renamed Pilot Zed")
	if !res2.Incremental {
		t.Fatalf("rebuild not incremental: %+v", res2)
	}
	id2, files2 := liveHashes(t, f.indexer)
	g2 := f.indexer.Acquire()
	defer g2.Release()
	fresh := map[string]bool{}
	freshPaths := map[string]bool{}
	var freshBytes int64
	for path, sum := range files2 {
		if !distinct(files1)[sum] {
			freshPaths[path] = true
		}
		if !distinct(files1)[sum] && !fresh[sum] {
			fresh[sum] = true
			info, err := os.Stat(filepath.Join(g2.Dir(), path))
			if err != nil {
				t.Fatal(err)
			}
			freshBytes += info.Size()
		}
	}
	// The characters' record index and affiliation column keep their
	// bases: what is new is their deltas, not the files rewritten whole.
	for _, name := range []string{"characters.idx", "characters.idx-base", "characters.aff"} {
		if freshPaths["records/"+name] {
			t.Errorf("the incremental generation has records/%s rewritten", name)
		}
	}
	for _, name := range []string{"characters.idx-delta", "characters.aff-delta", "characters.delta"} {
		if !freshPaths["records/"+name] {
			t.Errorf("the incremental generation has no new records/%s", name)
		}
	}
	pub2 := publish(t, f.pub, f.indexer)
	if pub2.Uploaded != len(fresh) || pub2.UploadedBytes != freshBytes || pub2.Uploaded >= pub2.Files {
		t.Fatalf("incremental publish uploaded %d objects (%d bytes) of %d files; want the %d new (%d bytes)",
			pub2.Uploaded, pub2.UploadedBytes, pub2.Files, len(fresh), freshBytes)
	}
	t.Logf("incremental: %d of %d files uploaded, %d of %d bytes", pub2.Uploaded, pub2.Files, pub2.UploadedBytes, pub2.Bytes)
	check(t, f.follower)
	rid, rfiles = liveHashes(t, f.replica)
	if rid != id2 || fmt.Sprint(rfiles) != fmt.Sprint(files2) {
		t.Fatalf("replica on %d after the incremental publish, want %d with identical files", rid, id2)
	}
	st := f.follower.Status()
	if d := st.LastDownload; d == nil || d.Fetched != freshBytes || d.Reused != d.Bytes-freshBytes {
		t.Fatalf("replica's download: %+v; want %d bytes fetched and the rest reused", st.LastDownload, freshBytes)
	}
	if st.Live != id2 || st.Pointer != id2 || st.LagGenerations != 0 || st.LastError != "" {
		t.Fatalf("status after catching up: %+v", st)
	}
	// Nothing new: a check is a cheap no-op.
	check(t, f.follower)
}

// TestPublishKeep: with --publish-keep 2 the bucket holds the manifests of
// the two newest generations and only the objects they name.
func TestPublishKeep(t *testing.T) {
	f := newFixture(t, 2)
	var kept []map[string]string
	for i := range 4 {
		if i > 0 {
			f.rename(t, int64(90000010+i), fmt.Sprintf("Keep Test %d", i))
		}
		publish(t, f.pub, f.indexer)
		_, h := liveHashes(t, f.indexer)
		kept = append(kept, h)
	}
	ents, err := os.ReadDir(filepath.Join(f.bucketDir, "generations"))
	if err != nil {
		t.Fatal(err)
	}
	var manifests []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".attrs") {
			manifests = append(manifests, e.Name())
		}
	}
	live := f.indexer.Live().ID
	want := []string{fmt.Sprintf("%06d.json", live-1), fmt.Sprintf("%06d.json", live)}
	if fmt.Sprint(manifests) != fmt.Sprint(want) {
		t.Fatalf("manifests in the bucket: %v, want %v", manifests, want)
	}
	need := distinct(kept[2])
	for s := range distinct(kept[3]) {
		need[s] = true
	}
	if got := objectsIn(t, f.bucketDir); fmt.Sprint(got) != fmt.Sprint(need) {
		t.Fatalf("bucket holds %d objects, the two kept generations name %d", len(got), len(need))
	}
	if st := f.pub.Status(); st.Published != live || st.Last == nil || st.Last.DeletedGenerations != 1 {
		t.Fatalf("publisher status: %+v %+v", st, st.Last)
	}
}

// corruptNew damages the bucket's copy of one object that the live
// generation has and the previous one did not, returning its path and
// good content: the generation's metadata file (which a follower reads
// before the rest) with meta, else the same other object every time.
func corruptNew(t *testing.T, f *fixture, before map[string]string, meta bool, damage func(path string)) (string, []byte) {
	t.Helper()
	_, now := liveHashes(t, f.indexer)
	old := distinct(before)
	sums := slices.Sorted(maps.Keys(distinct(now)))
	for _, sum := range sums {
		if old[sum] || (sum == now[indexer.MetaFile]) != meta {
			continue
		}
		path := filepath.Join(f.bucketDir, "objects", sum)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		damage(path)
		return path, good
	}
	t.Fatal("no new object")
	return "", nil
}

// TestFollowRefusesBadObjects: a corrupted object and a missing one are
// refused, the previous generation keeps serving and the error shows in
// the status; once the object is right, the next check catches up.
func TestFollowRefusesBadObjects(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 3)
	publish(t, f.pub, f.indexer)
	check(t, f.follower)
	id1, files1 := liveHashes(t, f.replica)
	f.rename(t, 90000003, "Corrupt Case")
	publish(t, f.pub, f.indexer)
	id2 := f.indexer.Live().ID

	for _, tc := range []struct {
		name, want string
		damage     func(string)
	}{
		{"corrupted", "checksum mismatch", func(p string) {
			raw, _ := os.ReadFile(p)
			raw[len(raw)/2] ^= 0xff
			if err := os.WriteFile(p, raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing", "missing from the bucket", func(p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, meta := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/meta=%v", tc.name, meta), func(t *testing.T) {
				path, good := corruptNew(t, f, files1, meta, tc.damage)
				err := f.follower.Check(ctx)
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), tc.want) {
					t.Fatalf("check with a %s object: %v, want an error saying %q", tc.name, err, tc.want)
				}
				if rid, rfiles := liveHashes(t, f.replica); rid != id1 || fmt.Sprint(rfiles) != fmt.Sprint(files1) {
					t.Fatalf("replica moved to %d; want %d untouched", rid, id1)
				}
				g := f.replica.Acquire()
				n := g.Tables(snapshots.CategoryCharacter).Base.Len()
				g.Release()
				if n != 300 {
					t.Fatalf("replica's live generation holds %d names", n)
				}
				st := f.follower.Status()
				if st.LastError == "" || st.Pointer != id2 || st.Live != id1 || st.LagGenerations != 1 || st.Errors == 0 {
					t.Fatalf("status after a refused download: %+v", st)
				}
				if err := os.WriteFile(path, good, 0o644); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	check(t, f.follower)
	if st := f.follower.Status(); st.Live != id2 || st.LagGenerations != 0 {
		t.Fatalf("after repair: %+v", st)
	}
}

// TestFollowResumes: a download cut short (here by a missing object)
// keeps the files it verified; the next attempt, even by a new process on
// the same data directory, fetches only the rest.
func TestFollowResumes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 3)
	publish(t, f.pub, f.indexer)
	_, files := liveHashes(t, f.indexer)
	// The smallest object goes missing: the others download meanwhile.
	var smallest string
	var size int64 = -1
	for _, sum := range files {
		info, err := os.Stat(filepath.Join(f.bucketDir, "objects", sum))
		if err != nil {
			t.Fatal(err)
		}
		if size < 0 || info.Size() < size {
			smallest, size = sum, info.Size()
		}
	}
	path := filepath.Join(f.bucketDir, "objects", smallest)
	good, _ := os.ReadFile(path)
	os.Remove(path)
	data := filepath.Join(t.TempDir(), "resume")
	m1, fl1 := f.newReplica(t, data)
	if err := fl1.Check(ctx); err == nil {
		t.Fatal("download with a missing object succeeded")
	}
	first := fl1.Status().LastDownload
	if m1.Live() != nil || first == nil || first.Fetched == 0 {
		t.Fatalf("after the failed download: live %v, download %+v", m1.Live(), first)
	}
	// A new process on the same directory (as after kill -9, which
	// leaves a file half written).
	fl1.Close()
	m1.Close()
	incoming, _ := filepath.Glob(filepath.Join(data, "fleet", "incoming", "*"))
	if len(incoming) != 1 {
		t.Fatalf("download directories after the failure: %v", incoming)
	}
	stale := filepath.Join(incoming[0], "stale-download.part")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	m2, fl2 := f.newReplica(t, data)
	check(t, fl2)
	second := fl2.Status().LastDownload
	if second.Reused == 0 || second.Fetched >= second.Bytes || m2.Live() == nil {
		t.Fatalf("second download fetched %d of %d bytes (reused %d); want a resumed download", second.Fetched, second.Bytes, second.Reused)
	}
	if _, got := liveHashes(t, m2); fmt.Sprint(got) != fmt.Sprint(files) {
		t.Fatal("resumed replica's files differ from the indexer's")
	}
	leftovers, _ := filepath.Glob(filepath.Join(data, "fleet", "incoming", "*"))
	if len(leftovers) != 0 {
		t.Fatalf("download directories left behind: %v", leftovers)
	}
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".part") {
			t.Errorf("a partial download went live with the generation: %s", path)
		}
		return nil
	})
}

// TestFollowUnreachable: a bucket that disappears is an error in the
// status, never a change to what serves.
func TestFollowUnreachable(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 3)
	publish(t, f.pub, f.indexer)
	check(t, f.follower)
	id := f.replica.Live().ID
	moved := f.bucketDir + ".away"
	if err := os.Rename(f.bucketDir, moved); err != nil {
		t.Fatal(err)
	}
	if err := f.follower.Check(ctx); err == nil {
		t.Fatal("check of a vanished bucket succeeded")
	}
	if st := f.follower.Status(); st.Live != id || st.LastError == "" {
		t.Fatalf("status with the bucket gone: %+v", st)
	}
	if err := os.Rename(moved, f.bucketDir); err != nil {
		t.Fatal(err)
	}
	check(t, f.follower)
}

// TestSnapshotFromBucket: the indexer builds from a snapshot in a bucket,
// checking every file against its manifest.
// openFetching opens a manager on a new data directory that downloads
// the snapshots it is given by URL into the directory.
func openFetching(t *testing.T) (*indexer.Manager, *fleet.SnapshotFetcher) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	fetch := &fleet.SnapshotFetcher{Dir: filepath.Join(data, "fleet", "snapshot")}
	m, err := indexer.Open(indexer.Options{DataDir: data, Logger: quiet, FetchSnapshot: fetch.Fetch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, fetch
}

func TestSnapshotFromBucket(t *testing.T) {
	snap := newNames(50).snapshot(t)
	bucket := t.TempDir()
	ents, _ := os.ReadDir(snap)
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join(snap, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(bucket, e.Name()), raw, 0o644)
	}
	m, fetch := openFetching(t)
	url := "file://" + bucket
	indexertest.Build(t, m, indexer.BuildRequest{Snapshot: url, Trigger: "test"})
	if live := m.Live(); live.Snapshot != url || live.Counts[snapshots.CategoryCharacter] != 50 {
		t.Fatalf("built from the bucket: %+v", live)
	}
	// The downloaded snapshot holds access lists and roles: private to the
	// service, as the generations are.
	filepath.WalkDir(fetch.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		info, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s is %v, want no access for group and others", path, perm)
		}
		return nil
	})
	// A damaged file in the bucket: a build that must download it fails.
	var data1 string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "characters") {
			data1 = filepath.Join(bucket, e.Name())
		}
	}
	raw, _ := os.ReadFile(data1)
	raw[len(raw)/2] ^= 0x55
	os.WriteFile(data1, raw, 0o644)
	m2, _ := openFetching(t)
	_, err := m2.Build(context.Background(), indexer.BuildRequest{Snapshot: url, Trigger: "test"})
	if m2.Live() != nil {
		t.Fatal("a generation went live from a damaged snapshot")
	}
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("build from a damaged bucket snapshot: %v", err)
	}
}

// A generation this gds would answer wrongly (here, analysts' documents
// of a newer layout) is refused from its metadata alone: nothing else is
// downloaded, the replica keeps serving, its status says why, and the
// next readable generation is adopted.
func TestFollowRefusesUnreadableGeneration(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 3)
	data := filepath.Join(t.TempDir(), "replica")
	replica, follower := f.newReplica(t, data)
	publish(t, f.pub, f.indexer)
	check(t, follower)
	id1 := replica.Live().ID
	f.rename(t, 90000003, "Newer Layout")
	g := f.indexer.Acquire()
	dir := g.Dir()
	g.Release()
	indexertest.EditMeta(t, dir, func(meta map[string]any) { meta["fields"] = indexer.FieldsVersion + 1 })
	publish(t, f.pub, f.indexer)

	err := follower.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "newer than this gds reads") {
		t.Fatalf("check of a newer layout: %v", err)
	}
	if id := replica.Live().ID; id != id1 {
		t.Fatalf("replica moved to %d", id)
	}
	st := follower.Status()
	if !strings.Contains(st.LastError, "upgrade this gds") || st.Live != id1 || st.Download != nil {
		t.Fatalf("status after the refusal: %+v", st)
	}
	if st.LastDownload == nil || st.LastDownload.Generation != id1 {
		t.Fatalf("last download %+v: the refused generation was downloaded", st.LastDownload)
	}

	f.rename(t, 90000004, "Readable Again")
	publish(t, f.pub, f.indexer)
	check(t, follower)
	if id := replica.Live().ID; id != f.indexer.Live().ID {
		t.Fatalf("replica at %d, want %d", id, f.indexer.Live().ID)
	}
}
