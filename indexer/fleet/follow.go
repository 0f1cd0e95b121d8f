package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"gds/indexer"
	"gds/snapshots/disk"
)

// DefaultInterval is how often a replica reads the pointer unless told.
const DefaultInterval = 10 * time.Second

// Where a replica keeps its downloads, under its data directory (beside
// the generations, on the same file system, so a finished download is
// renamed into place).
const (
	stateDir     = "fleet"
	incomingDir  = "incoming"  // incoming/<n>/: a generation being downloaded
	manifestsDir = "manifests" // manifests/<n>.json: the manifest of a generation on disk
	partExt      = ".part"
)

// Adopter is what a Follower needs of indexer.Manager.
type Adopter interface {
	Acquire() *indexer.Generation
	Adopt(ctx context.Context, dir string) (indexer.Meta, error)
}

// Follower keeps a replica's data directory on the generation a bucket's
// pointer names. Anything wrong (an unreachable bucket, a missing object,
// a bad checksum, a full disk) leaves the live generation serving and is
// retried at the next interval.
type Follower struct {
	bucket   *blob.Bucket
	url      string
	data     string
	mgr      Adopter
	interval time.Duration
	log      zerolog.Logger
	now      func() time.Time

	etag string // of the pointer last read
	raw  []byte

	mu     sync.Mutex
	status FollowStatus
}

// FollowStatus is what /admin/status shows of a replica.
type FollowStatus struct {
	URL      string           `json:"url"`
	Interval indexer.Duration `json:"interval"`
	// Pointer is the generation the bucket names, and when it was
	// published; Live the one serving here.
	Pointer          uint64    `json:"pointer_generation"`
	PointerPublished time.Time `json:"pointer_published,omitzero"`
	Live             uint64    `json:"live_generation"`
	LiveCreated      time.Time `json:"live_created,omitzero"`
	// LagGenerations is Pointer - Live when behind; LagSeconds how long
	// since the pointer moved past the live generation (0 when caught up).
	LagGenerations uint64    `json:"lag_generations"`
	LagSeconds     float64   `json:"lag_seconds"`
	LastCheck      time.Time `json:"last_check,omitzero"`
	LastSuccess    time.Time `json:"last_success,omitzero"`
	LastError      string    `json:"last_error,omitempty"`
	LastErrorAt    time.Time `json:"last_error_at,omitzero"`
	Errors         int       `json:"errors"`
	// Download is the download in progress; LastDownload the last one
	// that finished (whether or not its generation went live).
	Download     *Download `json:"download,omitempty"`
	LastDownload *Download `json:"last_download,omitempty"`
}

// Download is the progress of a generation being downloaded.
type Download struct {
	Generation uint64 `json:"generation"`
	Files      int    `json:"files"`
	FilesDone  int    `json:"files_done"`
	Bytes      int64  `json:"bytes"`
	// Fetched counts bytes downloaded; Reused bytes already on disk
	// (resumed, or the same content in the live generation).
	Fetched int64 `json:"fetched_bytes"`
	Reused  int64 `json:"reused_bytes"`
}

// NewFollower opens the bucket at rawURL for a replica whose data
// directory is data.
func NewFollower(ctx context.Context, rawURL, data string, mgr Adopter, interval time.Duration, log zerolog.Logger) (*Follower, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("--follow-interval %v: want a positive duration", interval)
	}
	b, err := OpenBucket(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	f := &Follower{bucket: b, url: Redact(rawURL), data: data, mgr: mgr, interval: interval, log: log, now: time.Now}
	f.status = FollowStatus{URL: f.url, Interval: indexer.Duration(interval)}
	return f, nil
}

// Close closes the bucket.
func (f *Follower) Close() error { return f.bucket.Close() }

// Run checks the pointer now and every interval until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		f.Check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Status reports the replica's view of the bucket.
func (f *Follower) Status() FollowStatus {
	f.mu.Lock()
	st := f.status
	for _, d := range []**Download{&st.Download, &st.LastDownload} {
		if *d != nil {
			c := **d
			*d = &c
		}
	}
	f.mu.Unlock()
	if g := f.mgr.Acquire(); g != nil {
		st.Live, st.LiveCreated = g.Meta.ID, g.Meta.Created
		g.Release()
	}
	if st.Pointer > st.Live {
		st.LagGenerations = st.Pointer - st.Live
		st.LagSeconds = max(0, f.now().Sub(st.PointerPublished).Seconds())
	}
	return st
}

// Check reads the pointer and, when it names a newer generation,
// downloads it and makes it live. The error is also recorded in Status.
func (f *Follower) Check(ctx context.Context) error {
	err := f.check(ctx)
	now := f.now().UTC()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status.LastCheck = now
	if err != nil {
		f.status.LastError, f.status.LastErrorAt = err.Error(), now
		f.status.Errors++
		f.log.Error().Err(err).Msg("following the bucket failed; the live generation keeps serving")
		return err
	}
	f.status.LastSuccess = now
	return nil
}

func (f *Follower) live() uint64 {
	g := f.mgr.Acquire()
	if g == nil {
		return 0
	}
	defer g.Release()
	return g.Meta.ID
}

func (f *Follower) check(ctx context.Context) error {
	attrs, err := f.bucket.Attributes(ctx, PointerKey)
	if isNotFound(err) {
		return errors.New("the bucket has no generation published yet")
	}
	if err != nil {
		return wrapKey(PointerKey, err)
	}
	f.mu.Lock()
	known, pointer := f.etag != "" && attrs.ETag == f.etag, f.status.Pointer
	f.mu.Unlock()
	// A HEAD per interval: the pointer is read again only when its ETag
	// changed (or the driver has none) or the last download failed.
	if known && pointer != 0 && pointer <= f.live() {
		return nil
	}
	raw, err := readSmall(ctx, f.bucket, PointerKey)
	if err != nil {
		return err
	}
	ptr, err := ParsePointer(raw)
	if err != nil {
		return err
	}
	f.mu.Lock()
	changed := !bytes.Equal(raw, f.raw)
	f.etag, f.raw = attrs.ETag, raw
	f.status.Pointer, f.status.PointerPublished = ptr.Generation, ptr.Published
	f.mu.Unlock()
	live := f.live()
	switch {
	case ptr.Generation == live:
		return nil
	case ptr.Generation < live:
		return fmt.Errorf("the pointer names generation %d, older than the live %d: was the indexer's data directory emptied?", ptr.Generation, live)
	}
	if changed {
		f.log.Info().Uint64("generation", ptr.Generation).Uint64("live", live).Msg("new generation published; downloading")
	}
	m, err := ReadManifest(ctx, f.bucket, ptr)
	if err != nil {
		return err
	}
	if err := f.readable(ctx, m); err != nil {
		return fmt.Errorf("generation %d: %w", m.Generation, err)
	}
	dir, err := f.download(ctx, m)
	if err != nil {
		return fmt.Errorf("downloading generation %d: %w", m.Generation, err)
	}
	meta, err := f.mgr.Adopt(ctx, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	f.forgetManifests(meta.ID)
	f.log.Info().Uint64("generation", meta.ID).Time("created", meta.Created).Msg("generation live")
	return nil
}

// readable fetches only the generation's metadata and says why this gds
// would refuse to adopt it (indexer.Readable), before its files are
// downloaded: every interval, until a readable one is published.
func (f *Follower) readable(ctx context.Context, m *Manifest) error {
	for _, fl := range m.Files {
		if fl.Path != indexer.MetaFile {
			continue
		}
		raw, err := readSmall(ctx, f.bucket, objectKey(fl.SHA256))
		if isNotFound(err) {
			return errMissingObject(fl.SHA256)
		}
		if err != nil {
			return err
		}
		if got := sha256Hex(raw); got != fl.SHA256 {
			return fmt.Errorf("%s: checksum mismatch: manifest says %s, object has %s; refused", fl.Path, fl.SHA256, got)
		}
		return indexer.Readable(raw)
	}
	return fmt.Errorf("its manifest lists no %s", indexer.MetaFile)
}

// errMissingObject says that the object of a generation's file is not in
// the bucket, whichever of the follower's reads found it so.
func errMissingObject(sha string) error {
	return fmt.Errorf("object %s is missing from the bucket (deleted by --publish-keep, or lost)", objectKey(sha))
}

func (f *Follower) path(parts ...string) string {
	return filepath.Join(append([]string{f.data, stateDir}, parts...)...)
}

// download fetches every file of m into incoming/<n>, reusing what is
// already there (an interrupted download) or in the live generation (the
// same content), and checking every object's SHA-256 and size. It returns
// the complete directory.
func (f *Follower) download(ctx context.Context, m *Manifest) (string, error) {
	name := strconv.FormatUint(m.Generation, 10)
	dir := f.path(incomingDir, name)
	if err := os.MkdirAll(dir, disk.PrivateDir); err != nil {
		return "", err
	}
	// Downloads of other generations are abandoned; their files are
	// reused only if the live generation has them too.
	if ents, err := os.ReadDir(f.path(incomingDir)); err == nil {
		for _, e := range ents {
			if e.Name() != name {
				_ = os.RemoveAll(f.path(incomingDir, e.Name()))
			}
		}
	}
	// A .part is a file whose download did not finish: a failed write
	// (a full disk) removes its own, a killed process leaves it. Its
	// file may now come from the live generation instead, so it would
	// never be overwritten: remove them all before starting.
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, partExt) {
			_ = os.Remove(path)
		}
		return nil
	})
	raw, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(f.path(manifestsDir), disk.PrivateDir); err != nil {
		return "", err
	}
	if err := disk.WriteFileAtomic(f.path(manifestsDir, name+".json"), raw, disk.PrivateFile); err != nil {
		return "", err
	}
	reuse := map[string]string{}
	if g := f.mgr.Acquire(); g != nil {
		defer g.Release() // its files stay while they are linked
		if lm, err := f.localManifest(g.Meta.ID); err == nil {
			for _, fl := range lm.Files {
				reuse[fl.SHA256] = filepath.Join(g.Dir(), filepath.FromSlash(fl.Path))
			}
		}
	}
	prog := &Download{Generation: m.Generation, Files: len(m.Files), Bytes: m.Bytes()}
	f.setDownload(prog)
	defer f.finishDownload() // before the generation can go live
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transfers)
	for _, fl := range m.Files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			fetched, reused, err := f.fetch(gctx, dir, fl, reuse[fl.SHA256])
			if err != nil {
				return fmt.Errorf("%s: %w", fl.Path, err)
			}
			f.mu.Lock()
			prog.FilesDone++
			prog.Fetched += fetched
			prog.Reused += reused
			f.mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if id, err := indexer.GenerationID(dir); err != nil || id != m.Generation {
		return "", fmt.Errorf("%s does not describe generation %d (%v)", indexer.MetaFile, m.Generation, err)
	}
	return dir, nil
}

func (f *Follower) finishDownload() {
	f.mu.Lock()
	f.status.LastDownload, f.status.Download = f.status.Download, nil
	f.mu.Unlock()
}

func (f *Follower) setDownload(d *Download) {
	f.mu.Lock()
	f.status.Download = d
	f.mu.Unlock()
}

// fetch puts one file in place: kept if already there and whole, linked
// from the live generation if it has the same content, else downloaded.
func (f *Follower) fetch(ctx context.Context, dir string, fl File, local string) (fetched, reused int64, err error) {
	dest := filepath.Join(dir, filepath.FromSlash(fl.Path))
	if sum, n, err := hashFile(dest); err == nil {
		if sum == fl.SHA256 && n == fl.Size {
			return 0, fl.Size, nil
		}
		_ = os.Remove(dest)
	}
	if err := os.MkdirAll(filepath.Dir(dest), disk.PrivateDir); err != nil {
		return 0, 0, err
	}
	if local != "" {
		// The live generation's files were checked when they arrived and
		// are never written again; a hard link shares them.
		if info, err := os.Stat(local); err == nil && info.Size() == fl.Size && os.Link(local, dest) == nil {
			return 0, fl.Size, nil
		}
	}
	part := dest + partExt
	out, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, disk.PrivateFile)
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(part) // after a successful rename: gone already
	r, err := f.bucket.NewReader(ctx, objectKey(fl.SHA256), nil)
	if isNotFound(err) {
		out.Close()
		return 0, 0, errMissingObject(fl.SHA256)
	}
	if err != nil {
		out.Close()
		return 0, 0, wrapKey(objectKey(fl.SHA256), err)
	}
	// Written as the indexer wrote it, in HugeChunk pieces: a name table
	// mapped straight from the page cache is then in huge pages here too.
	h, cw := sha256.New(), disk.NewChunkWriter(out, disk.HugeChunk)
	n, err := io.Copy(io.MultiWriter(cw, h), io.LimitReader(r, fl.Size+1))
	r.Close()
	if err == nil {
		err = disk.SyncClose(out, cw)
	} else {
		out.Close()
	}
	if err != nil {
		return n, 0, wrapKey(objectKey(fl.SHA256), err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != fl.Size || got != fl.SHA256 {
		return n, 0, fmt.Errorf("%s: checksum mismatch: manifest says %s (%d bytes), object has %s (%d bytes); refused",
			objectKey(fl.SHA256), fl.SHA256, fl.Size, got, n)
	}
	return n, 0, os.Rename(part, dest)
}

// localManifest reads the manifest of a generation this replica downloaded.
func (f *Follower) localManifest(id uint64) (*Manifest, error) {
	raw, err := os.ReadFile(f.path(manifestsDir, strconv.FormatUint(id, 10)+".json"))
	if err != nil {
		return nil, err
	}
	return ParseManifest(raw, id)
}

// forgetManifests removes the manifests of generations other than live.
func (f *Follower) forgetManifests(live uint64) {
	ents, err := os.ReadDir(f.path(manifestsDir))
	if err != nil {
		return
	}
	keep := strconv.FormatUint(live, 10) + ".json"
	for _, e := range ents {
		if e.Name() != keep && strings.HasSuffix(e.Name(), ".json") {
			_ = os.Remove(f.path(manifestsDir, e.Name()))
		}
	}
}
