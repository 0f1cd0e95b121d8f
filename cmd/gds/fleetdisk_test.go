//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gds/indexer/fleet"
)

// TestFleetReplicaDiskFull: a replica whose data directory fills up while
// it downloads a new generation keeps serving the one it has, reports the
// disk's error in /admin/status and /metrics, leaves no partial file (only
// whole, checked ones, kept for the next attempt), starts again on the full
// disk serving its generation, and goes live on the new one by itself once
// space is freed. The data directory is a small tmpfs (root only; skipped
// elsewhere).
func TestFleetReplicaDiskFull(t *testing.T) {
	needsBinary(t)
	work := t.TempDir()
	bucketDir := filepath.Join(work, "bucket")
	idx := filepath.Join(work, "indexer")
	publish := func(args ...string) {
		t.Helper()
		args = append([]string{"index", "--snapshot", sampleSnapshot, "--data", idx, "--publish", "file://" + bucketDir + "?create_dir=1"}, args...)
		if out, err := runGDSBin(t, args...); err != nil {
			t.Fatalf("gds index --publish: %v\n%s", err, out)
		}
	}
	data := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=48M", "tmpfs", data).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): %v %s", err, strings.TrimSpace(string(out)))
	}
	// Registered before any process starts, so it runs after they are gone.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", data).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s (retrying lazily)", data, err, out)
			exec.Command("umount", "-l", data).Run()
		}
	})

	publish()
	follow := []string{"--follow", "file://" + bucketDir, "--follow-interval", "200ms"}
	replica := serveBinary(t, data, follow...)
	modified := lastModified(t, replica)

	// Fill the disk but for a little, then publish a full rebuild: its
	// bleve indexes are new content, many times what is left.
	filler := filepath.Join(data, "filler")
	fillDisk(t, data, filler, 256<<10)
	publish("--full")
	gen1, gen2 := bucketManifest(t, bucketDir, 1), bucketManifest(t, bucketDir, 2)
	old := map[string]bool{}
	for _, f := range gen1.Files {
		old[f.SHA256] = true
	}
	var fresh int64
	for _, f := range gen2.Files {
		if !old[f.SHA256] {
			fresh += f.Size
		}
	}
	if fresh < 1<<20 {
		t.Fatalf("generation 2 has only %d new bytes: the test needs more than the 256 KiB left", fresh)
	}

	full := func(r *faultServer) {
		t.Helper()
		var st fleet.FollowStatus
		if !poll(time.Minute, func() bool {
			st = replicaFollow(t, r)
			return st.Pointer == 2 && strings.Contains(st.LastError, syscall.ENOSPC.Error())
		}) {
			t.Fatalf("no disk-full error in /admin/status within a minute: %+v", st)
		}
		if st.Live != 1 || st.LagGenerations != 1 {
			t.Fatalf("status on a full disk: %+v", st)
		}
		t.Logf("last_error: %s", st.LastError)
		if v := r.metric(t, fleet.MetricFollowErrors); v < 1 {
			t.Errorf("%s = %v on a full disk", fleet.MetricFollowErrors, v)
		}
		if v := r.metric(t, fleet.MetricLagGenerations); v != 1 {
			t.Errorf("%s = %v, want 1", fleet.MetricLagGenerations, v)
		}
		if v := r.metric(t, fleet.MetricFollowLastError); v < float64(time.Now().Add(-time.Hour).Unix()) {
			t.Errorf("%s = %v", fleet.MetricFollowLastError, v)
		}
		if got := lastModified(t, r); got != modified {
			t.Errorf("on a full disk the replica answers from Last-Modified %q, want generation 1's %q", got, modified)
		}
	}
	full(replica)
	replica.stop(t)

	// What the failed attempts left: no partial file, and every file kept
	// for the next attempt whole and checked.
	incoming := filepath.Join(data, "fleet", "incoming", "2")
	want := map[string]string{}
	for _, f := range gen2.Files {
		want[f.Path] = f.SHA256
	}
	kept := 0
	filepath.WalkDir(filepath.Join(data, "fleet"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(path, ".part") || strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("partial file left on a full disk: %s", path)
		}
		rel, err := filepath.Rel(incoming, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != want[filepath.ToSlash(rel)] {
			t.Errorf("kept %s does not match the manifest", rel)
		}
		kept++
		return nil
	})
	t.Logf("%d whole files of generation 2 kept for the next attempt", kept)

	// Started again on the full disk: ready on generation 1 at once, and
	// the error back in its status.
	replica = serveBinary(t, data, follow...)
	full(replica)

	// Space freed: the running replica finishes by itself.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The generation goes live in the manager a moment before the follower
	// records its success: wait for both.
	var st fleet.FollowStatus
	if !poll(time.Minute, func() bool {
		st = replicaFollow(t, replica)
		return st.Live == 2 && st.LagGenerations == 0 && !st.LastSuccess.Before(st.LastErrorAt)
	}) {
		t.Fatalf("generation 2 not live and the check not recorded as a success within a minute of freeing space: %+v", st)
	}
	if v := replica.metric(t, fleet.MetricLagGenerations); v != 0 {
		t.Errorf("%s = %v after recovery", fleet.MetricLagGenerations, v)
	}
	if got := lastModified(t, replica); got == "" {
		t.Error("no Last-Modified after recovery")
	}
	if ents, _ := os.ReadDir(filepath.Join(data, "fleet", "incoming")); len(ents) != 0 {
		t.Errorf("download directories left after recovery: %v", ents)
	}
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".part") {
			t.Errorf("partial file after recovery: %s", path)
		}
		return nil
	})
	replica.stop(t)
}

// fillDisk allocates a file at name taking all but leave bytes of dir's
// file system.
func fillDisk(t *testing.T, dir, name string, leave int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	size := int64(st.Bavail)*st.Bsize - leave
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		t.Fatalf("fallocate %d bytes: %v", size, err)
	}
}

func bucketManifest(t *testing.T, bucketDir string, gen uint64) *fleet.Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(bucketDir, "generations", fmt.Sprintf("%06d.json", gen)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := fleet.ParseManifest(raw, gen)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func replicaFollow(t *testing.T, r *faultServer) fleet.FollowStatus {
	t.Helper()
	_, body := r.get(t, "http://"+r.admin+"/admin/status")
	var st struct {
		Fleet struct {
			Follow *fleet.FollowStatus `json:"follow"`
		} `json:"fleet"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.Fleet.Follow == nil {
		t.Fatalf("/admin/status: %v %s", err, body)
	}
	return *st.Fleet.Follow
}

func lastModified(t *testing.T, s *faultServer) string {
	t.Helper()
	resp, err := s.client.Get("http://" + s.public + "/latest/search/?categories=solar_system&search=jita")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("search = %d", resp.StatusCode)
	}
	return resp.Header.Get("Last-Modified")
}
