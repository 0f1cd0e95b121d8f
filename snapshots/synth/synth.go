// Package synth generates deterministic synthetic players — characters,
// corporations, alliances, structures, corporation roles and documents —
// into a snapshot, optionally on top of a base snapshot such as an
// imported SDE. The same Config always yields byte-identical files.
//
// Generation streams: memory grows with the number of corporations and
// alliances, never with the number of characters or structures.
package synth

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"gds/snapshots"
)

// Config says what to generate.
type Config struct {
	Characters, Corporations, Alliances, Structures int64
	// Seed picks the population; the same seed gives the same records.
	Seed uint64
	// Created is the manifest's creation time and the "now" of the data
	// (birthdays before it, pending changes after it). Zero means
	// DefaultCreated(Seed).
	Created time.Time
	// Base, when set, is copied into the output under the generated records.
	Base *snapshots.Snapshot
	// Gzip writes .jsonl.gz files.
	Gzip bool
	// Zstd writes .jsonl.zst files (wins over Gzip).
	Zstd bool
	// Progress, when set, is called now and then while a kind is written
	// (done records so far out of total) and once when it is complete.
	Progress func(k snapshots.Kind, done, total int64)
}

// DefaultCreated is the fixed creation time for a seed: downtime on a day
// of 2026 chosen by the seed, so a snapshot is reproducible without a flag.
func DefaultCreated(seed uint64) time.Time {
	day := time.Duration(seed%300) * 24 * time.Hour
	return time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC).Add(day)
}

// Generate writes the snapshot to dir (replacing what is there) and
// returns it opened.
func Generate(ctx context.Context, dir string, cfg Config) (*snapshots.Snapshot, error) {
	if cfg.Created.IsZero() {
		cfg.Created = DefaultCreated(cfg.Seed)
	}
	cfg.Created = cfg.Created.UTC().Truncate(time.Second)
	base, err := scanBase(cfg.Base)
	if err != nil {
		return nil, err
	}
	w, err := newWorld(&cfg, base.systems)
	if err != nil {
		return nil, err
	}
	out, err := snapshots.Create(dir, snapshots.CreateOptions{Source: source(&cfg), Gzip: cfg.Gzip, Zstd: cfg.Zstd, Created: cfg.Created})
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	g := &generator{ctx: ctx, cfg: &cfg, w: w, out: out, stations: base.stations, docSeq: base.lastDoc}
	if err := g.run(); err != nil {
		out.Abort()
		return nil, fmt.Errorf("generate %s: %w", dir, err)
	}
	snap, err := out.Commit()
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", dir, err)
	}
	return snap, nil
}

func source(cfg *Config) string {
	s := fmt.Sprintf("gds generate --seed %d --characters %d --corporations %d --alliances %d --structures %d",
		cfg.Seed, cfg.Characters, cfg.Corporations, cfg.Alliances, cfg.Structures)
	if cfg.Base != nil {
		s += " on " + cfg.Base.Manifest.Source
	}
	return s
}

// baseFacts is what generation needs to know of the base snapshot.
type baseFacts struct {
	// systems are where structures are anchored.
	systems []system
	// stations may be corporations' home stations.
	stations []int64
	// lastDoc is the base's last document number: generated documents are
	// numbered after it, as their numbers mean nothing.
	lastDoc int64
}

// scanBase reads the base's facts; without a base, or without a universe
// in it, structures go to a built-in list of real systems.
func scanBase(base *snapshots.Snapshot) (baseFacts, error) {
	var f baseFacts
	if base != nil {
		err := base.Each(snapshots.SolarSystems, func(rec snapshots.Record, _ snapshots.Line) error {
			s := rec.(*snapshots.SolarSystem)
			f.systems = append(f.systems, system{id: s.ID, name: s.Name})
			return nil
		})
		if err == nil {
			err = base.Each(snapshots.Stations, func(_ snapshots.Record, l snapshots.Line) error {
				f.stations = append(f.stations, l.Key)
				return nil
			})
		}
		if err == nil {
			err = base.Each(snapshots.Documents, func(_ snapshots.Record, l snapshots.Line) error {
				f.lastDoc = l.Key
				return nil
			})
		}
		if err != nil {
			return f, fmt.Errorf("base: %w", err)
		}
	}
	if len(f.systems) == 0 {
		for _, s := range builtinSystems {
			f.systems = append(f.systems, system{id: s.id, name: s.name})
		}
	}
	return f, nil
}

// generator writes one snapshot.
type generator struct {
	ctx context.Context
	cfg *Config
	w   *world
	out *snapshots.Writer

	stations []int64
	docSeq   int64
}

// genStep is one pass of generation: the kinds it writes and the
// function that makes their records.
type genStep struct {
	outs []output
	gen  func(emitFunc) error
}

// steps are the passes in order: corporations before structures, whose
// names use their tickers.
func (g *generator) steps() []genStep {
	w := g.w
	return []genStep{
		{[]output{{snapshots.Alliances, w.nAlliances}}, w.alliances},
		{[]output{{snapshots.Corporations, w.nCorps}}, g.corporations},
		{[]output{{snapshots.Characters, w.nChars}, {snapshots.Roles, 0}}, w.characters},
		{[]output{{snapshots.Structures, w.nStructures}}, w.structures},
		{[]output{{snapshots.Documents, 0}}, g.documents},
	}
}

// run writes every kind: base-only kinds are copied, generated kinds are
// merged with the base's records of the same kind.
func (g *generator) run() error {
	steps := g.steps()
	generated := map[snapshots.Kind]bool{}
	for _, s := range steps {
		for _, o := range s.outs {
			generated[o.kind] = true
		}
	}
	for _, k := range snapshots.Kinds {
		if generated[k] || g.cfg.Base == nil || !g.cfg.Base.Has(k) {
			continue
		}
		if err := g.copyBase(k); err != nil {
			return err
		}
	}
	for _, s := range steps {
		if err := g.step(s.outs, s.gen); err != nil {
			return err
		}
	}
	return nil
}

// sink writes one kind's file: generated records in ascending key order,
// merged with the base's records of that kind (also ascending), so both
// are streamed and a key present in both is caught.
type sink struct {
	g     *generator
	kind  snapshots.Kind
	total int64
	done  int64

	next    func() (snapshots.Line, error, bool)
	stop    func()
	peek    snapshots.Line
	hasPeek bool
}

const progressEvery = 1 << 15

func (g *generator) sink(k snapshots.Kind, total int64) *sink {
	s := &sink{g: g, kind: k, total: total}
	if g.cfg.Base != nil && g.cfg.Base.Has(k) {
		s.total += g.cfg.Base.Count(k)
		s.next, s.stop = iter.Pull2(baseLines(g.cfg.Base, k))
	}
	return s
}

var errStopped = errors.New("stopped")

// baseLines yields the base's lines of kind k, then its error if any.
func baseLines(base *snapshots.Snapshot, k snapshots.Kind) iter.Seq2[snapshots.Line, error] {
	return func(yield func(snapshots.Line, error) bool) {
		err := base.Each(k, func(_ snapshots.Record, l snapshots.Line) error {
			if !yield(l, nil) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			yield(snapshots.Line{}, err)
		}
	}
}

// fill makes peek the next base line, if any.
func (s *sink) fill() error {
	if s.hasPeek || s.next == nil {
		return nil
	}
	l, err, ok := s.next()
	if !ok {
		s.stop()
		s.next = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("base %s: %w", s.kind, err)
	}
	// Raw is only valid until the next pull; keep a copy.
	l.Raw = append([]byte(nil), l.Raw...)
	s.peek, s.hasPeek = l, true
	return nil
}

// copyBaseBelow writes the base's lines with keys below key (all of them
// when all is set).
func (s *sink) copyBaseBelow(key int64, all bool) error {
	for {
		if err := s.fill(); err != nil {
			return err
		}
		if !s.hasPeek {
			return nil
		}
		if !all && s.peek.Key >= key {
			if s.peek.Key == key {
				return fmt.Errorf("%s: id %d is in the base snapshot and among the generated records", s.kind, key)
			}
			return nil
		}
		if err := s.g.out.AddRaw(s.kind, s.peek.Key, s.peek.Raw); err != nil {
			return err
		}
		s.hasPeek = false
		if err := s.tick(); err != nil {
			return err
		}
	}
}

// addRaw writes one generated record, already validated and encoded,
// after the base records below it.
func (s *sink) addRaw(key int64, raw []byte) error {
	if err := s.copyBaseBelow(key, false); err != nil {
		return err
	}
	if err := s.g.out.AddRaw(s.kind, key, raw); err != nil {
		return err
	}
	return s.tick()
}

func (s *sink) tick() error {
	s.done++
	if s.done%progressEvery != 0 {
		return nil
	}
	if p := s.g.cfg.Progress; p != nil {
		p(s.kind, s.done, s.total)
	}
	return s.g.ctx.Err()
}

// release stops reading the base; a sink abandoned on an error must not
// leave its reader suspended.
func (s *sink) release() {
	if s.stop != nil {
		s.stop()
	}
}

// close writes the rest of the base's lines.
func (s *sink) close() error {
	defer s.release()
	if err := s.copyBaseBelow(0, true); err != nil {
		return err
	}
	// Touch keeps a kind that ended up empty as an empty file: it is still
	// part of the snapshot.
	if err := s.g.out.Touch(s.kind); err != nil {
		return err
	}
	if p := s.g.cfg.Progress; p != nil {
		p(s.kind, s.done, s.total)
	}
	return nil
}

// copyBase copies a kind that only the base has.
func (g *generator) copyBase(k snapshots.Kind) error {
	s := g.sink(k, 0)
	defer s.release()
	return s.close()
}
