// Package indexer builds bleve indexes and search tables from a snapshot
// into immutable generations, makes a complete generation live atomically,
// and keeps the last good one serving when a build fails.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/rs/zerolog"

	"gds/indexer/nametable"
	"gds/indexer/pace"
	"gds/indexer/typo"
	"gds/snapshots"
	"gds/snapshots/disk"
)

// DefaultBatchSize is Options.BatchSize's default: the fastest full build.
const DefaultBatchSize = 10_000

// MaxBatchSize is the largest Options.BatchSize (a batch is built in memory).
const MaxBatchSize = 1_000_000

// Options configure a Manager.
type Options struct {
	// DataDir holds the generations.
	DataDir string
	// Logger receives build and switch events.
	Logger zerolog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ShardSize is the most documents per bleve shard; larger categories
	// are split into shards built in parallel, an even number of them for
	// a category of more than half ShardSize. Default 1,000,000.
	ShardSize int
	// BatchSize is the number of documents per bleve batch, and so per
	// segment file of a shard built whole (shards do not merge their
	// segments). Default DefaultBatchSize; at most MaxBatchSize. Larger
	// batches make fewer segments, each of which analysts' prefix and
	// wildcard queries search, for a slower full build (figures in
	// docs/performance.md).
	BatchSize int
	// KeepSegments leaves a fully built bleve shard with one segment per
	// batch instead of merging them into one at the end of its build (in
	// the background phase, after the generation went live for searches):
	// a shorter full build, slower analysts' prefix and wildcard queries.
	KeepSegments bool
	// BleveCharacters indexes characters in bleve shards too, as every
	// other category is. By default their analysts' queries are answered
	// from the name tables and value columns alone (package query's
	// table queries): bleve indexing 10M characters was three quarters of
	// a full build and half a generation's disk (docs/analysts.md).
	BleveCharacters bool
	// AnalystIdle is how long a generation keeps the bleve shards an
	// analyst's query opened after the last such query ends; they are
	// opened again by the next. Default 10 minutes; negative: until the
	// generation retires.
	AnalystIdle time.Duration
	// TablesInMemory reads the name tables of the generations that serve
	// searches, and their typo indexes, into memory (nametable.Load: huge
	// pages on Linux) instead of mapping their files: a server's choice,
	// for faster contains searches; a one-off build or tool maps them.
	TablesInMemory bool
	// TablesInMemoryAuto reads them so (when TablesInMemory is false) in
	// each generation whose tables fit 1/AutoHoldShare of the memory the
	// process may use, and its typo indexes when they fit what the tables
	// and the stores (StoresInMemory, StoresInMemoryAuto) left of it
	// (inMemory.plan). Typo indexes not held are mapped unpopulated, the
	// page cache holding the pages suggestions read.
	TablesInMemoryAuto bool
	// StoresInMemory holds what a record lookup reads (the record stores'
	// data and the keys and places of their index) in memory of the
	// process's own, in huge pages on Linux, instead of in the page
	// cache, which the kernel empties of pages unread for a while: a
	// server's choice, so that resolving a record never waits for the
	// disk.
	StoresInMemory bool
	// StoresInMemoryAuto holds them so (when StoresInMemory is false) in
	// each generation whose record stores' files fit what its tables held
	// in memory (TablesInMemory, TablesInMemoryAuto) left of
	// 1/AutoHoldShare of the memory the process may use: the machine's, or
	// its cgroup's limit when lower (inMemory.plan; what the parts held
	// always take is set aside first). Where they take more,
	// they stay mapped, for the kernel to reclaim under pressure.
	StoresInMemoryAuto bool
	// MaxIncrementalShare is the largest share of a category's records that
	// may change for its bleve index to be patched rather than rebuilt.
	// Default 0.1.
	MaxIncrementalShare float64
	// OnBuild, when set, is called after every build attempt (for metrics).
	OnBuild func(BuildResult)
	// FetchSnapshot, when set, turns a build request's snapshot into a
	// local directory (a snapshot in object storage is downloaded and
	// checked); the generation still records the request's name.
	FetchSnapshot func(ctx context.Context, snapshot string) (dir string, err error)
	// Pacer, when set, is asked between units of a build's CPU-heavy work
	// (batches of records, names, documents) whether to pause, so that a
	// server's searches get the cores first (gds serve --build-yield).
	// The generation built is the same either way.
	Pacer pace.Pacer
	// BuildChild, when set, runs builds in a child process instead of
	// this one (gds serve --build-process), so that they take neither the
	// server's cores at its priority nor its memory; the Manager makes
	// live the generation the child leaves CURRENT. Builds with no
	// generation live yet, and the completion of the live generation's
	// bleve part at Open, still run here (see inChild).
	BuildChild BuildChild
	// KeepRetired leaves the generations a build retires on disk for
	// another process still serving them (gds index run by gds serve
	// --build-process); the next Open that finds no build running
	// removes them, as does the server once it serves a newer one.
	KeepRetired bool

	// beforeBleve, when set, runs at the start of a build's bleve phase,
	// after the generation went live for searches (tests hold it there).
	beforeBleve func(ctx context.Context, generation uint64) error
}

// Manager owns a data directory: the live generation and the builds that
// replace it.
type Manager struct {
	opts   Options
	log    zerolog.Logger
	now    func() time.Time
	ctx    context.Context
	cancel context.CancelFunc
	live   atomic.Pointer[Generation]
	// analysts is the generation whose bleve shards answer the analysts'
	// queries: the live one once its background phase is complete, an
	// earlier one until then (nil when none has them).
	analysts atomic.Pointer[Generation]
	// ptrMu orders changes of live and analysts, so a generation is marked
	// for deletion only once neither points at it.
	ptrMu sync.Mutex
	// bleve is the state of the live generation's bleve part (under mu).
	bleve bleveState

	mu       sync.Mutex
	job      *job
	last     *BuildResult
	failures int
	nextID   uint64
	builds   int
	cron     *cron.Cron
	schedule *Schedule
	cronID   cron.EntryID
}

type job struct {
	running  Running
	done     chan struct{}
	result   BuildResult
	progress atomic.Pointer[Progress]
	// ctx ends when the manager closes or, for a resume of the bleve
	// part, when a build request supersedes it.
	ctx    context.Context
	cancel context.CancelFunc
	resume bool
}

// ErrNoGeneration is returned when there is nothing to serve.
var ErrNoGeneration = errors.New("no index generation has been built")

// Open opens the data directory and the last good generation, if any.
// Leftovers of builds that never finished are removed.
func Open(opts Options) (*Manager, error) {
	if opts.DataDir == "" {
		return nil, errors.New("indexer: no data directory")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ShardSize <= 0 {
		opts.ShardSize = 1_000_000
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	opts.BatchSize = min(opts.BatchSize, MaxBatchSize)
	if opts.AnalystIdle == 0 {
		opts.AnalystIdle = 10 * time.Minute
	}
	if opts.MaxIncrementalShare <= 0 {
		opts.MaxIncrementalShare = 0.1
	}
	// The data directory is the service user's alone (see disk.PrivateDir);
	// one that exists keeps the mode its owner gave it.
	if err := os.MkdirAll(opts.DataDir, disk.PrivateDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(opts.DataDir, generationsIn), disk.PrivateDir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, log: opts.Logger, now: opts.Now, ctx: ctx, cancel: cancel}
	// Leftovers are only removed when no process is building here: a build
	// directory whose builder died (even by kill -9) is unlocked.
	lock, idle, err := tryLockBuilds(opts.DataDir)
	if err != nil {
		cancel()
		return nil, err
	}
	if leftovers, _ := UnfinishedBuilds(opts.DataDir); idle && len(leftovers) > 0 {
		m.log.Info().Strs("dirs", leftovers).Msg("removing unfinished builds of a process that stopped")
	}
	ids, err := listGenerations(opts.DataDir, idle)
	if err != nil {
		lock.Unlock()
		cancel()
		return nil, err
	}
	current, err := m.readCurrent()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m.log.Info().Str("data", opts.DataDir).Msg("no generation yet in this data directory")
	case err != nil:
		m.log.Warn().Err(err).Msg("no current generation recorded")
	}
	// The generation answering analysts while the current one's bleve
	// part is incomplete is kept.
	analystsID := analystsGeneration(opts.DataDir, current)
	for _, id := range ids {
		if id == current || id == analystsID || !idle {
			continue
		}
		// Retired generations whose deletion was cut short.
		_ = os.RemoveAll(generationDir(opts.DataDir, id))
	}
	lock.Unlock()
	if current != 0 {
		g, err := openGeneration(generationDir(opts.DataDir, current), opts.AnalystIdle, opts.inMemory())
		if err != nil {
			m.log.Error().Err(err).Uint64("generation", current).Msg("cannot open the current generation")
		} else {
			m.live.Store(g)
			m.log.Info().Uint64("generation", current).Str("snapshot", g.Meta.Snapshot).EmbedObject(g.held).Msg("opened the live generation")
			m.openAnalysts(g, analystsID, idle)
		}
	}
	return m, nil
}

func (m *Manager) readCurrent() (uint64, error) {
	raw, err := os.ReadFile(filepath.Join(m.opts.DataDir, currentFile))
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
}

// Acquire returns the live generation with a reference the caller must
// Release, or nil when none is live. A search that acquired a generation
// finishes on it even if another becomes live meanwhile.
func (m *Manager) Acquire() *Generation {
	for {
		g := m.live.Load()
		if g == nil {
			return nil
		}
		if g.tryAcquire() {
			return g
		}
		// g was retired and released between Load and tryAcquire; the new
		// live generation is already stored.
	}
}

// Live returns the live generation's Meta, or nil.
func (m *Manager) Live() *Meta {
	g := m.Acquire()
	if g == nil {
		return nil
	}
	defer g.Release()
	meta := g.meta()
	return &meta
}

// Build builds a generation from req.Snapshot and makes it live, waiting
// for the result. A request made while a build runs joins that build
// (Coalesced) instead of starting a second one.
func (m *Manager) Build(ctx context.Context, req BuildRequest) (BuildResult, error) {
	j, coalesced := m.start(req)
	select {
	case <-j.done:
	case <-ctx.Done():
		return BuildResult{ID: j.running.ID, Coalesced: coalesced}, ctx.Err()
	}
	r := j.result
	r.Coalesced = coalesced
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}

// Start begins a build in the background and returns its ID; coalesced is
// set when a build was already running and the request joined it.
func (m *Manager) Start(req BuildRequest) (id string, coalesced bool) {
	j, coalesced := m.start(req)
	return j.running.ID, coalesced
}

func (m *Manager) start(req BuildRequest) (*job, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var after *job
	if m.job != nil {
		if !m.job.resume || req.Trigger == triggerResume {
			m.log.Info().Str("build_id", m.job.running.ID).Str("trigger", req.Trigger).Msg("build already running; request coalesced")
			return m.job, true
		}
		// A new build supersedes completing the bleve part of the live
		// generation: it makes a complete generation of its own.
		m.log.Info().Str("build_id", m.job.running.ID).Str("trigger", req.Trigger).Msg("a build request supersedes the resumed bleve phase")
		after = m.job
		after.cancel()
	}
	m.builds++
	j := &job{done: make(chan struct{}), resume: req.Trigger == triggerResume, running: Running{
		ID: fmt.Sprintf("b%d-%d", m.now().Unix(), m.builds), Trigger: req.Trigger,
		Snapshot: req.Snapshot, Started: m.now().UTC(),
	}}
	j.ctx, j.cancel = context.WithCancel(pace.With(m.ctx, m.opts.Pacer))
	m.job = j
	go func() {
		if after != nil {
			<-after.done
		}
		m.run(j, req)
	}()
	return j, false
}

func (m *Manager) run(j *job, req BuildRequest) {
	defer j.cancel()
	res := BuildResult{ID: j.running.ID, Trigger: req.Trigger, Snapshot: req.Snapshot, Started: j.running.Started}
	log := m.log.With().Str("build_id", res.ID).Str("trigger", req.Trigger).Str("snapshot", req.Snapshot).Logger()
	var err error
	if m.inChild(j) {
		err = m.runChild(j, req, &res, log)
	} else {
		err = m.runHere(j, req, &res, log)
	}
	res.Finished = m.now().UTC()
	res.Duration = Duration(res.Finished.Sub(res.Started))
	m.mu.Lock()
	j.result = res
	m.last = &res
	if err != nil {
		m.failures++
	}
	if m.job == j {
		m.job = nil
	}
	m.mu.Unlock()
	// Observers hear of the build before anyone waiting on it is released,
	// so a caller of Build sees its metrics.
	if m.opts.OnBuild != nil {
		m.opts.OnBuild(res)
	}
	close(j.done)
}

// runHere runs the build j in this process, filling res; the error is the
// build's failure, if any.
func (m *Manager) runHere(j *job, req BuildRequest, res *BuildResult, log zerolog.Logger) error {
	ph, err := m.build(j, req)
	switch {
	case err != nil:
		res.Error = err.Error()
		if j.resume {
			m.setBleveState(BleveFailed, err)
		}
		log.Error().Err(err).Dur("duration", m.now().Sub(res.Started)).Msg("build failed; the live generation keeps serving")
	case ph.gen == nil:
		res.Unchanged = true
		log.Info().Msg("snapshot already live; nothing to build")
	default:
		meta := ph.gen.Meta
		res.Generation, res.Incremental, res.Changed = meta.ID, meta.Incremental, meta.Changed
		if !ph.resume {
			if ph.b != nil {
				ph.gen.refs.Add(1) // completeBleve's, while it writes there
			}
			res.Searchable = Duration(m.now().Sub(res.Started))
			m.swap(ph.gen)
			log.Info().Uint64("generation", meta.ID).Bool("incremental", meta.Incremental).Int("changed", meta.Changed).
				Dur("searchable_after", time.Duration(res.Searchable)).Bool("bleve_pending", ph.b != nil).EmbedObject(ph.gen.held).
				Msg("generation live: searches, lookups and structures answer from it")
		}
		if ph.b != nil {
			if err = m.completeBleve(j, &ph, res.Started); err != nil {
				res.Error = err.Error()
				log.Error().Err(err).Uint64("generation", meta.ID).
					Msg("analysts' indexes failed; searches keep serving the generation, analysts' queries an earlier one")
			} else {
				log.Info().Uint64("generation", meta.ID).Dur("duration", m.now().Sub(res.Started)).
					Msg("generation complete: analysts' queries answer from it")
			}
		}
	}
	if ph.lock != nil {
		ph.lock.Unlock()
	}
	return err
}

// build makes a checked generation whose tables and record stores are
// complete, or nothing; its bleve part, when pending, is left to
// completeBleve. It holds the data directory's build lock until then.
func (m *Manager) build(j *job, req BuildRequest) (ph phase1, err error) {
	gen, _, err := m.buildSearch(j, req, &ph)
	ph.gen = gen
	if err != nil && ph.lock != nil {
		ph.lock.Unlock()
		ph.lock = nil
	}
	return ph, err
}

// buildSearch is build's first phase.
func (m *Manager) buildSearch(j *job, req BuildRequest, ph *phase1) (*Generation, Meta, error) {
	progress := func(p Progress) { j.progress.Store(&p) }
	// Every record is decoded, validated and checked against the manifest's
	// digests and counts while the build streams it; nothing goes live
	// unless all of it passes, so the files are read once.
	progress(Progress{Phase: "verify"})
	dir := req.Snapshot
	if m.opts.FetchSnapshot != nil {
		var err error
		if dir, err = m.opts.FetchSnapshot(j.ctx, req.Snapshot); err != nil {
			return nil, Meta{}, err
		}
	}
	snap, err := snapshots.OpenManifest(dir)
	if err != nil {
		return nil, Meta{}, err
	}
	prev := m.Acquire()
	full := req.Full
	if prev != nil {
		defer prev.Release()
		// Names folded another way, or analysts' documents of another
		// layout (another bleve mapping), cannot be patched nor kept.
		full = full || prev.Meta.Fold != nametable.FoldVersion || prev.Meta.Fields != FieldsVersion ||
			prev.Meta.Typos != typo.Version
		same := prev.Meta.SnapshotHash == snap.Hash && !full
		if same && prev.BleveReady() {
			return nil, Meta{}, nil
		}
		if !same && !prev.BleveReady() {
			// Its bleve shards are incomplete: nothing of it can be
			// reused or patched.
			full = true
		}
		if same {
			// Its bleve part failed or was cut short: complete it.
			return m.resumeBleve(j, prev, snap, ph)
		}
	} else if j.resume {
		return nil, Meta{}, nil
	}
	id, tmp, err := m.claimBuild(j, ph)
	if err != nil {
		return nil, Meta{}, err
	}
	final := generationDir(m.opts.DataDir, id)
	started := m.now()
	b := &builder{ctx: j.ctx, opts: m.opts, snap: snap, prev: prev, full: full, dir: tmp, progress: progress, log: m.log}
	defer raiseMemoryLimit(snap.Records())()
	b.meta = Meta{ID: id, Snapshot: req.Snapshot, SnapshotHash: snap.Hash, Fold: nametable.FoldVersion, Typos: typo.Version,
		SnapshotSource: snap.Manifest.Source, SnapshotCreated: snap.Manifest.Created, BleveBatch: m.opts.BatchSize}
	if err := b.run(); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, Meta{}, err
	}
	b.meta.Created = m.now().UTC()
	b.meta.BuildDuration = Duration(m.now().Sub(started))
	b.meta.SearchableAfter = b.meta.BuildDuration
	b.meta.BlevePending = len(b.pendingBleve) > 0
	progress(Progress{Phase: "switch"})
	if err := finishDir(tmp, final, b.meta); err != nil {
		return nil, Meta{}, err
	}
	b.dir = final
	gen, err := m.openChecked(final, id, snap)
	if err != nil {
		return nil, Meta{}, err
	}
	if err := disk.WriteFileAtomic(filepath.Join(m.opts.DataDir, currentFile), []byte(strconv.FormatUint(id, 10)+"\n"), disk.PrivateFile); err != nil {
		gen.remove = true
		gen.Release()
		return nil, Meta{}, err
	}
	if b.meta.BlevePending {
		ph.b = b
	}
	return gen, gen.Meta, nil
}

// claimBuild takes the data directory's build lock (waiting for another
// process's build) and the next generation ID, with its .building
// directory.
func (m *Manager) claimBuild(j *job, ph *phase1) (id uint64, tmp string, err error) {
	lock, err := lockBuilds(j.ctx, m.opts.DataDir, func() {
		m.log.Info().Str("build_id", j.running.ID).Msg("another process is building in this data directory; waiting for it")
	})
	if err != nil {
		return 0, "", err
	}
	ph.lock = lock
	m.mu.Lock()
	after := m.nextID
	m.mu.Unlock()
	id, tmp, err = claimID(m.opts.DataDir, after)
	if err != nil {
		return 0, "", err
	}
	m.mu.Lock()
	m.nextID = id
	m.mu.Unlock()
	return id, tmp, nil
}

// swap makes gen live for searches, and for analysts too when its bleve
// part is complete; a generation neither answers is closed and deleted
// once the last query holding it releases it.
func (m *Manager) swap(gen *Generation) {
	m.ptrMu.Lock()
	defer m.ptrMu.Unlock()
	old := m.live.Swap(gen)
	m.setBleve(gen)
	if gen.BleveReady() {
		m.promoteLocked(gen)
	}
	m.drop(old)
}

// Close stops the schedule, cancels a running build and closes the live
// generation (after the searches holding it finish).
func (m *Manager) Close() error {
	m.mu.Lock()
	c := m.cron
	m.mu.Unlock()
	m.cancel() // a running build stops at its next check
	if c != nil {
		<-c.Stop().Done()
	}
	m.mu.Lock()
	j := m.job
	m.mu.Unlock()
	if j != nil {
		<-j.done
	}
	m.ptrMu.Lock()
	defer m.ptrMu.Unlock()
	if g := m.live.Swap(nil); g != nil {
		g.Release()
	}
	if g := m.analysts.Swap(nil); g != nil {
		g.Release()
	}
	return nil
}
