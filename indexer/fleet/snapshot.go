package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gocloud.dev/blob"

	"gds/snapshots"
	"gds/snapshots/disk"
)

// SnapshotFetcher reads snapshots from buckets for the indexer
// (indexer.Options.FetchSnapshot): a snapshot URL names a bucket prefix
// laid out as a snapshot directory (manifest.json beside the files). Each
// file is downloaded into a cache directory and checked against the
// manifest's SHA-256; files already in the cache with the right digest are
// kept, so a new snapshot downloads only the files that changed.
type SnapshotFetcher struct {
	// Dir is the cache directory (one snapshot at a time).
	Dir string
	mu  sync.Mutex
}

// Fetch returns a local directory holding snapshot: snapshot itself when it
// is a path, else the cache filled from the bucket.
func (s *SnapshotFetcher) Fetch(ctx context.Context, snapshot string) (string, error) {
	if !IsURL(snapshot) {
		return snapshot, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := OpenBucket(ctx, snapshot)
	if err != nil {
		return "", err
	}
	defer b.Close()
	where := Redact(snapshot)
	raw, err := readSmall(ctx, b, snapshots.ManifestName)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", where, err)
	}
	var m snapshots.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("snapshot %s: %s: %w", where, snapshots.ManifestName, err)
	}
	if err := os.MkdirAll(s.Dir, disk.PrivateDir); err != nil {
		return "", err
	}
	// Until every file is in, the cache is no snapshot.
	if err := os.Remove(filepath.Join(s.Dir, snapshots.ManifestName)); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	want := map[string]bool{snapshots.ManifestName: true}
	for kind, fi := range m.Files {
		// The indexer checks names against kinds; here only that a name
		// stays in the directory.
		if fi.Path == "" || strings.ContainsAny(fi.Path, `/\`) || fi.Path == "." || fi.Path == ".." || !isHexSHA256(fi.SHA256) {
			return "", fmt.Errorf("snapshot %s: %s: file of %s is %q with SHA-256 %q", where, snapshots.ManifestName, kind, fi.Path, fi.SHA256)
		}
		want[fi.Path] = true
		if err := s.fetchFile(ctx, b, fi.Path, fi.SHA256); err != nil {
			return "", fmt.Errorf("snapshot %s: %w", where, err)
		}
	}
	// The manifest last: the cache is a snapshot only once all is there.
	if err := disk.WriteFileAtomic(filepath.Join(s.Dir, snapshots.ManifestName), raw, disk.PrivateFile); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if !want[e.Name()] {
			_ = os.RemoveAll(filepath.Join(s.Dir, e.Name()))
		}
	}
	return s.Dir, nil
}

// fetchFile puts one snapshot file in the cache unless it is there with
// the right digest.
func (s *SnapshotFetcher) fetchFile(ctx context.Context, b *blob.Bucket, name, sum string) error {
	dest := filepath.Join(s.Dir, name)
	if got, _, err := hashFile(dest); err == nil && got == sum {
		return nil
	}
	part := dest + partExt
	out, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, disk.PrivateFile)
	if err != nil {
		return err
	}
	defer os.Remove(part)
	r, err := b.NewReader(ctx, name, nil)
	if err != nil {
		out.Close()
		return wrapKey(name, err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), r)
	r.Close()
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return wrapKey(name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("%s: checksum mismatch: manifest says %s, object has %s", name, sum, got)
	}
	return os.Rename(part, dest)
}
