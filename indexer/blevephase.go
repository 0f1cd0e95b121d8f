package indexer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gds/snapshots"
	"gds/snapshots/disk"
)

// A build has two phases. The first writes the name tables and record
// stores (and patches the bleve shards of an incremental build), checks
// them and makes the generation live: searches, ID lookups and structures
// answer from it. The second builds the analysts' bleve shards into the
// live generation's directory; until they are complete and checked the
// analysts' queries are answered by the newest generation whose shards
// are (kept on disk until then), or refused. A failure of the second phase
// leaves the first serving; the next build of the same snapshot, or the
// next start, completes it.

// ErrBlevePending is returned for a generation whose analysts' bleve
// shards are still being built.
var ErrBlevePending = errors.New("the analysts' indexes of this generation are still being built")

// triggerResume is the trigger of a job completing the live generation's
// bleve part after a restart.
const triggerResume = "resume"

// analystsFile records the generation answering analysts' queries when it
// is not the live one, so a restart keeps it and tools open it.
const analystsFile = "ANALYSTS"

// Bleve part states (Parts.Bleve).
const (
	BleveLive     = "live"     // complete and answering analysts
	BleveBuilding = "building" // the background phase is running
	BleveFailed   = "failed"   // the background phase failed; a rebuild or restart completes it
	BlevePending  = "pending"  // not complete, not being built now
)

// phase1 is what the first phase hands the second.
type phase1 struct {
	gen    *Generation // the generation made live (or to complete); nil: nothing built
	b      *builder    // the pending bleve work, nil when none
	lock   *buildLock
	resume bool // gen was already live
}

// bleveState is the live generation's bleve part as the status shows it.
type bleveState struct {
	state        string
	err          string
	searchableAt time.Time
	liveAt       time.Time
}

// Parts says which generation answers what.
type Parts struct {
	// Search is the generation answering searches, ID lookups and
	// structures (the live one).
	Search uint64 `json:"search"`
	// Analysts is the generation answering analysts' queries: Search once
	// its bleve part is live, an earlier one until then; 0 when none can.
	Analysts uint64 `json:"analysts"`
	// Bleve is the state of Search's bleve part: live, building, failed
	// or pending.
	Bleve      string `json:"bleve"`
	BleveError string `json:"bleve_error,omitempty"`
	// SearchableAt is when Search went live; BleveLiveAt when its bleve
	// part did (zero until then, and for a generation opened at start).
	SearchableAt time.Time `json:"searchable_at,omitzero"`
	BleveLiveAt  time.Time `json:"bleve_live_at,omitzero"`
}

// meta is the generation's Meta as it stands now.
func (g *Generation) meta() Meta {
	if m := g.final.Load(); m != nil {
		return *m
	}
	return g.Meta
}

// AcquireAnalysts returns the generation whose bleve shards answer the
// analysts' queries, with a reference the caller must Release, or nil
// when none has them.
func (m *Manager) AcquireAnalysts() *Generation {
	for {
		g := m.analysts.Load()
		if g == nil || g.tryAcquire() {
			return g
		}
	}
}

// Parts reports which generation answers what.
func (m *Manager) Parts() Parts {
	m.ptrMu.Lock()
	var p Parts
	if g := m.live.Load(); g != nil {
		p.Search = g.Meta.ID
	}
	if g := m.analysts.Load(); g != nil {
		p.Analysts = g.Meta.ID
	}
	m.ptrMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	p.Bleve, p.BleveError = m.bleve.state, m.bleve.err
	p.SearchableAt, p.BleveLiveAt = m.bleve.searchableAt, m.bleve.liveAt
	if p.Search == 0 {
		p.Bleve = ""
	}
	return p
}

// setBleve records gen going live for searches (under ptrMu).
func (m *Manager) setBleve(gen *Generation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bleve = bleveState{state: BlevePending, searchableAt: m.now().UTC()}
	if gen.BleveReady() {
		m.bleve.state, m.bleve.liveAt = BleveLive, m.bleve.searchableAt
	}
}

func (m *Manager) setBleveState(state string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bleve.state, m.bleve.err = state, ""
	if err != nil {
		m.bleve.err = err.Error()
	}
	if state == BleveLive {
		m.bleve.liveAt = m.now().UTC()
	}
}

// promoteLocked makes gen (bleve complete) answer the analysts' queries,
// unless a newer generation already does (under ptrMu).
func (m *Manager) promoteLocked(gen *Generation) {
	if cur := m.analysts.Load(); cur != nil && cur.Meta.ID >= gen.Meta.ID {
		return
	}
	if !gen.tryAcquire() {
		return
	}
	old := m.analysts.Swap(gen)
	_ = writeAnalystsID(m.opts.DataDir, gen.Meta.ID)
	m.drop(old)
}

// drop gives back the reference a pointer held on g; once neither the
// live nor the analysts' pointer holds it, it is deleted after its last
// reader (unless Options.KeepRetired; under ptrMu).
func (m *Manager) drop(g *Generation) {
	if g == nil {
		return
	}
	if g != m.live.Load() && g != m.analysts.Load() {
		g.remove = !m.opts.KeepRetired
		g.retired.Store(true)
	}
	g.Release()
}

// openAnalysts sets, at Open, the generation answering the analysts: the
// live one when complete, else the one ANALYSTS names, if it still opens;
// and, when the live one's bleve part is missing, starts completing it.
func (m *Manager) openAnalysts(live *Generation, id uint64, idle bool) {
	m.ptrMu.Lock()
	defer m.ptrMu.Unlock()
	m.setBleve(live)
	m.bleve.searchableAt = time.Time{}
	if live.BleveReady() {
		live.refs.Add(1)
		m.analysts.Store(live)
		m.bleve.liveAt = time.Time{}
		return
	}
	if id != 0 && id < live.Meta.ID {
		// It answers analysts only: its tables stay mapped.
		if g, err := openGeneration(generationDir(m.opts.DataDir, id), m.opts.AnalystIdle, inMemory{}); err == nil && g.BleveReady() {
			m.analysts.Store(g)
		} else if err == nil {
			g.Release()
		}
	}
	if idle {
		m.log.Info().Uint64("generation", live.Meta.ID).Msg("the live generation's analysts' indexes are incomplete; building them")
		m.start(BuildRequest{Snapshot: live.Meta.Snapshot, Trigger: triggerResume})
	}
}

func readAnalystsID(data string) (uint64, error) {
	raw, err := os.ReadFile(filepath.Join(data, analystsFile))
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
}

func writeAnalystsID(data string, id uint64) error {
	return disk.WriteFileAtomic(filepath.Join(data, analystsFile), []byte(strconv.FormatUint(id, 10)+"\n"), disk.PrivateFile)
}

// resumeBleve prepares completing the bleve part of gen, live already and
// built from snap: every category's shards are built again from the
// snapshot's records, along the key ranges gen records.
func (m *Manager) resumeBleve(j *job, gen *Generation, snap *snapshots.Snapshot, ph *phase1) (*Generation, Meta, error) {
	lock, err := lockBuilds(j.ctx, m.opts.DataDir, nil)
	if err != nil {
		return nil, Meta{}, err
	}
	ph.lock = lock
	if !gen.tryAcquire() {
		return nil, Meta{}, fmt.Errorf("generation %d closed", gen.Meta.ID)
	}
	ph.resume = true
	b := &builder{ctx: j.ctx, opts: m.opts, snap: snap, full: true, dir: gen.Dir(), meta: gen.Meta, log: m.log,
		progress: func(p Progress) { j.progress.Store(&p) }}
	mapping, err := Mapping()
	if err == nil {
		b.docs, err = newDocuments(mapping)
	}
	if err == nil {
		b.universe, err = readUniverse(snap)
	}
	if err != nil {
		gen.Release()
		return nil, Meta{}, err
	}
	cats := make([]snapshots.Category, 0, len(gen.Meta.Counts))
	for cat := range gen.Meta.Counts {
		cats = append(cats, cat)
	}
	slices.Sort(cats)
	for _, cat := range cats {
		if gen.TablesAnswer(cat) {
			continue
		}
		b.pendingBleve = append(b.pendingBleve, bleveTask{cat: cat, bounds: gen.Meta.ShardBounds[cat], shards: gen.Meta.Shards[cat]})
	}
	ph.b = b
	return gen, gen.Meta, nil
}

// completeBleve runs the second phase: it builds the pending bleve shards
// into the live generation's directory, checks them, records the
// generation complete and lets it answer the analysts' queries.
func (m *Manager) completeBleve(j *job, ph *phase1, started time.Time) error {
	gen, b := ph.gen, ph.b
	defer gen.Release() // the reference build took for this phase
	m.setBleveState(BleveBuilding, nil)
	err := b.runBleve(j.ctx, m.opts.beforeBleve)
	if err == nil {
		err = checkBleve(gen, "the tables")
	}
	meta := gen.Meta
	meta.BlevePending = false
	meta.BuildDuration = Duration(m.now().Sub(started))
	if ph.resume {
		meta.BuildDuration = gen.Meta.BuildDuration
	}
	if err == nil {
		err = disk.MakePrivate(gen.Dir())
	}
	if err == nil {
		err = writeMeta(gen.Dir(), meta)
	}
	if err != nil {
		m.setBleveState(BleveFailed, err)
		return fmt.Errorf("analysts' indexes of generation %d: %w", gen.Meta.ID, err)
	}
	m.bleveComplete(gen, meta)
	return nil
}

// bleveComplete records gen's bleve part complete, as meta (written to its
// directory) says, and lets it answer the analysts' queries.
func (m *Manager) bleveComplete(gen *Generation, meta Meta) {
	gen.final.Store(&meta)
	gen.bleveReady.Store(true)
	m.ptrMu.Lock()
	m.promoteLocked(gen)
	live := m.live.Load() == gen
	m.ptrMu.Unlock()
	if live {
		m.setBleveState(BleveLive, nil)
	}
}

// checkBleve verifies that every category's bleve shards hold as many
// documents as its Meta counts; counts says in errors where that number
// comes from. A category without bleve shards (its tables answer its
// analysts) is not checked.
func checkBleve(g *Generation, counts string) error {
	for cat, want := range g.Meta.Counts {
		if g.TablesAnswer(cat) {
			continue
		}
		n, err := g.countDocuments(cat)
		if err != nil {
			return err
		}
		if int(n) != want {
			return fmt.Errorf("%s: bleve holds %d documents, %s %d", cat, n, counts, want)
		}
	}
	return nil
}

// analystsGeneration is the generation whose bleve shards answer analysts
// when current is live: current once its bleve part is complete, else the
// one ANALYSTS names (current when none).
func analystsGeneration(data string, current uint64) uint64 {
	if m, err := readMeta(generationDir(data, current)); err != nil || !m.BlevePending {
		return current
	}
	if id, err := readAnalystsID(data); err == nil && id < current {
		return id
	}
	return current
}
