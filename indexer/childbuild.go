package indexer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// BuildChild runs one build in a child process (Options.BuildChild).
//
// The child builds req in the Manager's data directory as a build here
// does: under the directory's build lock, incrementally against the
// generation CURRENT names (the live one), checked against the snapshot,
// and it makes its generation CURRENT. BuildChild returns once the child
// has exited, with the result the child reported; it tells report the
// child's process ID once it runs and its progress as the child reports
// it. When ctx ends (the Manager closes) the child is stopped.
type BuildChild func(ctx context.Context, req BuildRequest, report ChildReport) (BuildResult, error)

// ChildReport receives what a build in a child process says while it runs.
type ChildReport interface {
	Started(pid int)
	Progress(p Progress)
}

// childReport shows a child's build in its job's status.
type childReport struct {
	m   *Manager
	j   *job
	log zerolog.Logger
}

func (r childReport) Started(pid int) {
	r.m.mu.Lock()
	r.j.running.PID = pid
	r.m.mu.Unlock()
	r.log.Info().Int("pid", pid).Msg("building in a child process")
}

func (r childReport) Progress(p Progress) { r.j.progress.Store(&p) }

// inChild says whether j runs in a child process: with Options.BuildChild
// set, every build but the completion of the live generation's bleve part
// at Open, provided a generation is live for the child to build against
// and no number past it is reserved (ReserveIDs: a child numbers its
// generation after those in the data directory).
func (m *Manager) inChild(j *job) bool {
	if m.opts.BuildChild == nil || j.resume {
		return false
	}
	live := m.Acquire()
	if live == nil {
		return false
	}
	defer live.Release()
	m.mu.Lock()
	reserved := m.nextID
	m.mu.Unlock()
	return reserved <= live.Meta.ID
}

// runChild runs the build j in a child process and makes live what the
// child left CURRENT, filling res; the error is the build's failure, if
// any. A child whose bleve phase failed has already made its generation
// CURRENT: it goes live for searches, as it would from a build here.
func (m *Manager) runChild(j *job, req BuildRequest, res *BuildResult, log zerolog.Logger) error {
	child, err := m.opts.BuildChild(j.ctx, req, childReport{m: m, j: j, log: log})
	res.Unchanged, res.Incremental, res.Changed = child.Unchanged, child.Incremental, child.Changed
	if j.ctx.Err() != nil {
		err = errors.Join(err, j.ctx.Err())
		res.Error = err.Error()
		log.Error().Err(err).Msg("build stopped with its child process; the live generation keeps serving")
		return err
	}
	gen, aerr := m.adoptCurrent()
	if aerr != nil {
		err = errors.Join(err, aerr)
	}
	if gen == nil {
		if err != nil {
			res.Error = err.Error()
			log.Error().Err(err).Dur("duration", m.now().Sub(res.Started)).Msg("build failed in its child process; the live generation keeps serving")
		} else if res.Unchanged {
			log.Info().Msg("snapshot already live; nothing to build")
		}
		return err
	}
	meta := gen.Meta
	res.Generation, res.Incremental, res.Changed = meta.ID, meta.Incremental, meta.Changed
	res.Searchable = Duration(m.now().Sub(res.Started))
	log.Info().Uint64("generation", meta.ID).Bool("incremental", meta.Incremental).Int("changed", meta.Changed).
		Dur("searchable_after", time.Duration(res.Searchable)).Bool("bleve_pending", !gen.BleveReady()).EmbedObject(gen.held).
		Msg("generation of the child process live: searches, lookups and structures answer from it")
	if err != nil {
		res.Error = err.Error()
		m.setBleveState(BleveFailed, err)
		log.Error().Err(err).Uint64("generation", meta.ID).
			Msg("analysts' indexes failed; searches keep serving the generation, analysts' queries an earlier one")
	}
	return err
}

// adoptCurrent makes live the generation CURRENT names when it is newer
// than the live one (a child's build made it), returning it; when CURRENT
// names the live generation and the child completed its bleve part, that
// part starts answering the analysts' queries. The child checked what it
// built against the snapshot; the generation is opened as Open opens it
// (refused if this gds would read it wrongly: see readable), without the
// build lock: another process's build, which may hold it for long,
// removes no generation CURRENT names.
func (m *Manager) adoptCurrent() (*Generation, error) {
	id, err := m.readCurrent()
	if err != nil {
		return nil, err
	}
	live := m.Acquire()
	if live == nil {
		return nil, ErrNoGeneration
	}
	defer live.Release()
	switch {
	case id == live.Meta.ID && !live.BleveReady():
		meta, err := readMeta(live.Dir())
		if err != nil {
			return nil, err
		}
		if !meta.BlevePending {
			m.bleveComplete(live, meta)
		}
		return nil, nil
	case id <= live.Meta.ID:
		return nil, nil
	}
	dir := generationDir(m.opts.DataDir, id)
	if meta, err := readMeta(dir); err != nil {
		return nil, err
	} else if err := readable(meta); err != nil {
		return nil, fmt.Errorf("generation %d: %w", id, err)
	}
	gen, err := openGeneration(dir, m.opts.AnalystIdle, m.opts.inMemory())
	if err != nil {
		return nil, err
	}
	m.ReserveIDs(id)
	m.swap(gen)
	return gen, nil
}
