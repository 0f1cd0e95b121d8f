package fleet

import (
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
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"gds/indexer"
)

// DefaultKeep is how many generations a bucket keeps unless told.
const DefaultKeep = 3

// transfers is how many objects move at once.
const transfers = 4

// Publisher uploads generations to a bucket. One process publishes to a
// bucket; its publishes run one at a time.
type Publisher struct {
	bucket *blob.Bucket
	url    string
	keep   int
	log    zerolog.Logger
	now    func() time.Time

	mu     sync.Mutex        // one publish at a time
	hashes map[fileID]string // SHA-256 of files already hashed, by inode
	last   Pointer           // what the bucket's pointer names (Generation 0: none)
	status PublishStatus     // guarded by smu
	smu    sync.Mutex
	kick   chan struct{}
}

// fileID identifies a file's content without reading it: generations are
// immutable, and an incremental build hard-links the files it keeps, so a
// file seen before (same inode, size and time) has the same hash.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

// PublishResult reports one publish.
type PublishResult struct {
	Generation uint64           `json:"generation"`
	Started    time.Time        `json:"started"`
	Duration   indexer.Duration `json:"duration"`
	Files      int              `json:"files"`
	Bytes      int64            `json:"bytes"`
	// Uploaded counts the objects (and their bytes) the bucket lacked.
	Uploaded      int   `json:"uploaded"`
	UploadedBytes int64 `json:"uploaded_bytes"`
	// Deleted counts the generations and objects removed by --publish-keep.
	DeletedGenerations int `json:"deleted_generations"`
	DeletedObjects     int `json:"deleted_objects"`
	// Unchanged is set when the pointer already named this generation.
	Unchanged bool   `json:"unchanged,omitempty"`
	Error     string `json:"error,omitempty"`
}

// PublishStatus is what /admin/status shows of a publisher.
type PublishStatus struct {
	URL       string         `json:"url"`
	Keep      int            `json:"keep"`
	Published uint64         `json:"published_generation"`
	Last      *PublishResult `json:"last_publish,omitempty"`
	Failures  int            `json:"failures"`
	Uploaded  int64          `json:"uploaded_bytes_total"`
}

// NewPublisher opens the bucket at rawURL and reads its pointer, so
// Published tells which generation the bucket serves. keep (at least 1) is
// how many generations stay in the bucket: a generation is deleted once
// keep newer ones are published.
func NewPublisher(ctx context.Context, rawURL string, keep int, log zerolog.Logger) (*Publisher, error) {
	if keep < 1 {
		return nil, fmt.Errorf("--publish-keep %d: want at least 1", keep)
	}
	b, err := OpenBucket(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	p := &Publisher{bucket: b, url: Redact(rawURL), keep: keep, log: log, now: time.Now,
		hashes: map[fileID]string{}, kick: make(chan struct{}, 1)}
	ptr, _, ok, err := ReadPointer(ctx, b)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("publish %s: %w", p.url, err)
	}
	if ok {
		p.last = ptr
	}
	p.status = PublishStatus{URL: p.url, Keep: keep, Published: ptr.Generation}
	return p, nil
}

// Close closes the bucket.
func (p *Publisher) Close() error { return p.bucket.Close() }

// Published is the generation the bucket's pointer names (0: none).
func (p *Publisher) Published() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last.Generation
}

// Status reports the publisher.
func (p *Publisher) Status() PublishStatus {
	p.smu.Lock()
	defer p.smu.Unlock()
	st := p.status
	if st.Last != nil {
		last := *st.Last
		st.Last = &last
	}
	return st
}

// Live is what Run publishes from (indexer.Manager implements it).
type Live interface {
	Acquire() *indexer.Generation
}

// Kick asks Run to publish the live generation now (after a build).
func (p *Publisher) Kick() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run publishes the live generation whenever Kick is called, and retries
// every retry while the bucket lags behind it, until ctx ends.
func (p *Publisher) Run(ctx context.Context, src Live, retry time.Duration) {
	t := time.NewTicker(retry)
	defer t.Stop()
	for {
		if g := src.Acquire(); g != nil {
			if g.Meta.ID != p.Published() && g.BleveReady() {
				_, _ = p.Publish(ctx, g)
			}
			g.Release()
		}
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-t.C:
		}
	}
}

// Publish uploads gen (held by the caller) and points the bucket at it:
// the objects it lacks, then the manifest, then the pointer, and then
// deletes what --publish-keep no longer keeps. A failure leaves the
// pointer where it was.
func (p *Publisher) Publish(ctx context.Context, gen *indexer.Generation) (PublishResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	res := PublishResult{Generation: gen.Meta.ID, Started: p.now().UTC()}
	err := p.publish(ctx, gen, &res)
	res.Duration = indexer.Duration(p.now().Sub(res.Started))
	log := p.log.With().Uint64("generation", res.Generation).Logger()
	if err != nil {
		res.Error = err.Error()
		log.Error().Err(err).Msg("publish failed; the bucket still points at the generation before")
	} else if !res.Unchanged {
		log.Info().Int("files", res.Files).Int64("bytes", res.Bytes).Int("uploaded", res.Uploaded).
			Int64("uploaded_bytes", res.UploadedBytes).Int("deleted_generations", res.DeletedGenerations).
			Int("deleted_objects", res.DeletedObjects).Dur("duration", time.Duration(res.Duration)).Msg("generation published")
	}
	p.smu.Lock()
	p.status.Last = &res
	p.status.Published = p.last.Generation
	p.status.Uploaded += res.UploadedBytes
	if err != nil {
		p.status.Failures++
	}
	p.smu.Unlock()
	return res, err
}

func (p *Publisher) publish(ctx context.Context, gen *indexer.Generation, res *PublishResult) error {
	id := gen.Meta.ID
	if id == p.last.Generation {
		res.Unchanged = true
		return nil
	}
	if id < p.last.Generation {
		return fmt.Errorf("generation %d is older than the published %d; build a newer one", id, p.last.Generation)
	}
	if !gen.BleveReady() {
		// A generation is published whole: replicas adopt complete ones.
		return fmt.Errorf("generation %d: its analysts' indexes are still being built; it is published once they are complete", id)
	}
	m, err := p.manifest(gen)
	if err != nil {
		return err
	}
	res.Files, res.Bytes = len(m.Files), m.Bytes()
	have, err := p.objects(ctx)
	if err != nil {
		return err
	}
	var missing []File
	queued := map[string]bool{}
	for _, f := range m.Files {
		if !have[f.SHA256] && !queued[f.SHA256] {
			queued[f.SHA256] = true
			missing = append(missing, f)
		}
	}
	if err := p.upload(ctx, gen.Dir(), missing); err != nil {
		return err
	}
	res.Uploaded = len(missing)
	for _, f := range missing {
		res.UploadedBytes += f.Size
	}
	raw, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := p.bucket.WriteAll(ctx, manifestKey(id), raw, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return wrapKey(manifestKey(id), err)
	}
	ptr := Pointer{Format: FormatVersion, Generation: id, Manifest: manifestKey(id), SHA256: sha256Hex(raw), Published: p.now().UTC()}
	praw, err := json.Marshal(ptr)
	if err != nil {
		return err
	}
	// Last: a reader that sees the pointer finds every object it names.
	if err := p.bucket.WriteAll(ctx, PointerKey, praw, &blob.WriterOptions{ContentType: "application/json", CacheControl: "no-cache"}); err != nil {
		return wrapKey(PointerKey, err)
	}
	p.last = ptr
	res.DeletedGenerations, res.DeletedObjects, err = p.prune(ctx, id)
	if err != nil {
		// Published all the same: what was not deleted now is next time.
		p.log.Warn().Err(err).Msg("deleting old generations from the bucket failed")
	}
	return nil
}

// manifest lists and hashes gen's files.
func (p *Publisher) manifest(gen *indexer.Generation) (*Manifest, error) {
	m := &Manifest{Format: FormatVersion, Generation: gen.Meta.ID, Created: gen.Meta.Created}
	root := gen.Dir()
	err := filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", name)
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum, err := p.hash(name, info)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, File{Path: filepath.ToSlash(rel), Size: info.Size(), SHA256: sum})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", gen.Meta.ID, err)
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	return m, nil
}

func (p *Publisher) hash(name string, info fs.FileInfo) (string, error) {
	var id fileID
	st, ok := info.Sys().(*syscall.Stat_t)
	if ok {
		id = fileID{dev: uint64(st.Dev), ino: st.Ino, size: info.Size(), mtime: info.ModTime().UnixNano()}
		if sum, ok := p.hashes[id]; ok {
			return sum, nil
		}
	}
	sum, _, err := hashFile(name)
	if err != nil {
		return "", err
	}
	if ok {
		p.hashes[id] = sum
	}
	return sum, nil
}

// hashFile returns a file's SHA-256 and size.
func hashFile(name string) (string, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// objects lists the content hashes the bucket holds.
func (p *Publisher) objects(ctx context.Context) (map[string]bool, error) {
	have := map[string]bool{}
	it := p.bucket.List(&blob.ListOptions{Prefix: objectsPrefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return have, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", objectsPrefix, err)
		}
		if sum := strings.TrimPrefix(obj.Key, objectsPrefix); isHexSHA256(sum) {
			have[sum] = true
		}
	}
}

// upload puts files (under dir) into the bucket, a few at a time.
func (p *Publisher) upload(ctx context.Context, dir string, files []File) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transfers)
	for _, f := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return p.put(gctx, filepath.Join(dir, filepath.FromSlash(f.Path)), f) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// put uploads one file as the object of its hash, checking the bytes sent
// still have that hash (an aborted write leaves no object behind).
func (p *Publisher) put(ctx context.Context, name string, f File) error {
	src, err := os.Open(name)
	if err != nil {
		return err
	}
	defer src.Close()
	wctx, abort := context.WithCancel(ctx)
	defer abort()
	w, err := p.bucket.NewWriter(wctx, objectKey(f.SHA256), &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return wrapKey(objectKey(f.SHA256), err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), src)
	if err == nil && (n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256) {
		err = fmt.Errorf("%s changed while it was published", name)
	}
	if err != nil {
		abort()
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return wrapKey(objectKey(f.SHA256), err)
	}
	return nil
}

// prune deletes the manifests of generations with keep or more newer ones,
// then every object no remaining manifest names.
func (p *Publisher) prune(ctx context.Context, newest uint64) (gens, objs int, err error) {
	var ids []uint64
	it := p.bucket.List(&blob.ListOptions{Prefix: manifestPrefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(obj.Key, manifestPrefix), ".json")
		if id, err := strconv.ParseUint(name, 10, 64); err == nil && obj.Key == manifestKey(id) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	keep := map[string]bool{}
	for i, id := range ids {
		if i < p.keep || id == newest {
			raw, err := readSmall(ctx, p.bucket, manifestKey(id))
			if err != nil {
				return gens, objs, err
			}
			var m Manifest
			if err := json.Unmarshal(raw, &m); err != nil {
				return gens, objs, wrapKey(manifestKey(id), err)
			}
			for _, f := range m.Files {
				keep[f.SHA256] = true
			}
			continue
		}
		if err := p.bucket.Delete(ctx, manifestKey(id)); err != nil && !isNotFound(err) {
			return gens, objs, err
		}
		gens++
	}
	have, err := p.objects(ctx)
	if err != nil {
		return gens, objs, err
	}
	for sum := range have {
		if keep[sum] {
			continue
		}
		if err := p.bucket.Delete(ctx, objectKey(sum)); err != nil && !isNotFound(err) {
			return gens, objs, err
		}
		objs++
	}
	return gens, objs, nil
}
