package query

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"gds/indexer"
	"gds/indexer/nametable"
	"gds/snapshots"
)

// Searcher answers searches and lookups over the live generation of an
// indexer.Manager. It is safe for concurrent use.
type Searcher struct {
	m    *indexer.Manager
	dirs localDirs
	// factions remembers corporations' factions for the live generation
	// (affiliation.go).
	factions atomic.Pointer[factionMemo]
}

// New returns a Searcher over m's live generation.
func New(m *indexer.Manager) *Searcher { return &Searcher{m: m} }

// View pins the live generation so several calls see the same data (a
// search and the lookups that follow it). Close releases it.
type View struct {
	g *indexer.Generation
	s *Searcher // nil for a view made without one (tests)
}

// View pins the live generation, or fails with ErrNotReady.
func (s *Searcher) View() (*View, error) {
	g := s.m.Acquire()
	if g == nil {
		return nil, ErrNotReady
	}
	return &View{g: g, s: s}, nil
}

// Close releases the view's generation.
func (v *View) Close() {
	if v.g != nil {
		v.g.Release()
		v.g = nil
	}
}

// Info identifies the view's generation.
func (v *View) Info() GenerationInfo {
	return GenerationInfo{ID: v.g.Meta.ID, Created: v.g.Meta.Created, SnapshotHash: v.g.Meta.SnapshotHash}
}

// Info identifies the live generation.
func (s *Searcher) Info() (GenerationInfo, error) {
	v, err := s.View()
	if err != nil {
		return GenerationInfo{}, err
	}
	defer v.Close()
	return v.Info(), nil
}

// Search runs req on the live generation.
func (s *Searcher) Search(ctx context.Context, req Request) (Result, error) {
	v, err := s.View()
	if err != nil {
		return Result{}, err
	}
	defer v.Close()
	return v.Search(ctx, req)
}

// Search runs req on the view's generation.
func (v *View) Search(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	res := Result{Generation: v.Info()}
	text := strings.TrimSpace(req.Text)
	if utf8.RuneCountInString(text) < MinTextRunes {
		return res, ErrTextTooShort
	}
	folded := []byte(nametable.Fold(text))
	lang, ok := NormalizeLanguage(req.Language)
	if !ok {
		lang = "en"
	}
	limit := req.Limit
	if limit <= 0 || limit > MaxResults {
		limit = MaxResults
	}
	for _, cat := range req.Categories {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		ids := v.searchCategory(cat, folded, req.Strict, lang, req.CharacterID, limit, &res.Stats)
		if len(ids) == 0 {
			continue
		}
		if res.IDs == nil {
			res.IDs = make(map[snapshots.Category][]int64, len(req.Categories))
		}
		res.IDs[cat] = ids
		res.Stats.Matches += len(ids)
	}
	res.Stats.Duration = time.Since(start)
	return res, nil
}

func (v *View) searchCategory(cat snapshots.Category, text []byte, strict bool, lang string, character int64, limit int, stats *Stats) []int64 {
	ct := v.g.Tables(cat)
	if ct == nil {
		return nil
	}
	s := scratchPool.Get().(*searchScratch)
	defer scratchPool.Put(s)
	w := walker{t: ct.Base, text: text, limit: limit, stats: stats, hits: s.hits[0][:0]}
	restricted := cat == snapshots.CategoryStructure
	if restricted {
		// Only structures the caller may access; a public search sees none.
		if character == 0 {
			return nil
		}
		var ok bool
		if w.filter, ok = ct.Base.AccessFilter(character); !ok {
			return nil
		}
	}
	overlay := ct.Overlays[lang]
	if overlay == nil {
		overlay = ct.Delta // records changed since the base table: merged the same way
	}
	if overlay != nil {
		w.filter.Hide = overlay.Mask()
	}
	w.run(strict)
	if overlay == nil {
		return w.ids()
	}
	ow := walker{t: overlay, text: text, limit: limit, stats: stats, hits: s.hits[1][:0]}
	if restricted {
		// Fail closed: an overlay entry nobody listed is seen by nobody.
		var ok bool
		if ow.filter, ok = overlay.AccessFilter(character); !ok {
			return w.ids()
		}
	}
	ow.run(strict)
	return mergeIDs(&w, &ow, limit)
}

// searchScratch holds the hits of a base table and of its overlay, pooled
// so that a search allocates little more than its answer.
type searchScratch struct {
	hits [2][MaxResults]hit
}

var scratchPool = sync.Pool{New: func() any { return new(searchScratch) }}

func (w *walker) run(strict bool) {
	if strict {
		w.strict()
	} else {
		w.contains()
	}
}
