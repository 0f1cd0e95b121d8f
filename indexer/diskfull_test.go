//go:build linux

package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// smallDisk mounts a tmpfs of size bytes at a temporary directory, or
// skips the test where mounting is not permitted (not root, no
// CAP_SYS_ADMIN).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// On a full disk a build fails with the disk's error as soon as a write
// fails, rather than reading and indexing on (bleve's background writer
// retries a failed write forever and batches pile up in memory), and the
// analysts' queries keep the generation they had.
func TestBuildFailsOnFullDisk(t *testing.T) {
	// Room for the tables and stores with their temporary files (the
	// runs of postings, the stores' spooled indexes: about 12 MiB at
	// once), not for the analysts' shards besides.
	data := filepath.Join(smallDisk(t, 16<<20), "data")
	m := open(t, data)
	defer m.Close()
	first := build(t, m, indexertest.Snapshot(t, indexertest.Records{
		snapshots.Characters: characters(20, func(i int) string { return fmt.Sprintf("Small %d", i) }),
	}), false)
	big := indexertest.Snapshot(t, indexertest.Records{
		snapshots.Characters: characters(60_000, func(i int) string { return fmt.Sprintf("Filler pilot %d of many", i) }),
	})
	done := make(chan error, 1)
	go func() {
		_, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: big, Full: true, Trigger: "test"})
		done <- err
	}()
	var err error
	// Generous: the build fails within a second or so; without the fix it
	// never returns.
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the build did not fail within 3 minutes of filling the disk")
	}
	t.Logf("build error: %v", err)
	if !errors.Is(err, syscall.ENOSPC) && !strings.Contains(fmt.Sprint(err), "no space left on device") {
		t.Fatalf("build on a full disk = %v, want the disk's error (ENOSPC)", err)
	}
	// The disk filled while the analysts' shards were written, after the
	// tables and stores went live: searches answer from the new
	// generation, analysts' queries from the first.
	p := m.Parts()
	if p.Analysts != first.Generation || p.Bleve != indexer.BleveFailed || p.BleveError == "" {
		t.Errorf("parts after the failed bleve phase = %+v, want analysts on %d and bleve failed", p, first.Generation)
	}
	if live := m.Live(); live == nil || (live.ID != first.Generation && live.ID != p.Search) {
		t.Errorf("live generation after the failed build = %+v", live)
	}
	ents, _ := os.ReadDir(filepath.Join(data, "generations"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".building") {
			t.Errorf("the failed build left %s", e.Name())
		}
	}
}
