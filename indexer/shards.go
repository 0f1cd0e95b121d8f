package indexer

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"

	"gds/snapshots"
)

// Index returns a category's bleve index (an alias over its shards), or
// nil when the generation has no such category. The shards are opened on
// first use and, when the generation has an idle time, closed once
// analysts' queries have left them alone that long (see UseIndexes): only
// analysts query bleve (searches and lookups read the tables and record
// stores), so a server that is not answering an analyst does not map the
// shards' segment files (about a thousand at 10M names; 170 to 620 MB
// resident once opened, depending on the page cache, and gigabytes more
// after prefix queries). Query holds the index open while it runs; another
// caller of a generation with an idle time must finish within it.
func (g *Generation) Index(c snapshots.Category) (bleve.Index, error) {
	if _, ok := g.Meta.Counts[c]; !ok || g.TablesAnswer(c) {
		return nil, nil
	}
	if !g.BleveReady() {
		return nil, fmt.Errorf("%s: generation %d: %w", c, g.Meta.ID, ErrBlevePending)
	}
	g.indexMu.Lock()
	defer g.indexMu.Unlock()
	if idx, ok := g.indexes[c]; ok {
		return idx, nil
	}
	if g.closed {
		return nil, fmt.Errorf("%s: generation %d is closed", c, g.Meta.ID)
	}
	idx, err := g.openCategory(c)
	if err != nil {
		return nil, err
	}
	g.indexes[c] = idx
	return idx, nil
}

// openCategory opens a category's bleve shards as one index.
func (g *Generation) openCategory(c snapshots.Category) (bleve.Index, error) {
	idx, err := openShards(filepath.Join(g.dir, string(c)), g.Meta.Shards[c])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	return idx, nil
}

// UseIndexes marks an analyst query as using the bleve indexes until the
// returned release: a generation with an idle time closes them once no
// query has used them for that long (they map the most memory of a
// server, and only analysts need them), and opens them again on the next.
func (g *Generation) UseIndexes() (release func()) {
	g.indexMu.Lock()
	g.indexUses++
	if g.idleTimer != nil {
		g.idleTimer.Stop()
	}
	g.indexMu.Unlock()
	return func() {
		g.indexMu.Lock()
		defer g.indexMu.Unlock()
		g.indexUses--
		if g.indexUses > 0 || g.idle <= 0 || g.closed || len(g.indexes) == 0 {
			return
		}
		if g.idleTimer == nil {
			g.idleTimer = time.AfterFunc(g.idle, g.closeIdleIndexes)
		} else {
			g.idleTimer.Reset(g.idle)
		}
	}
}

// closeIdleIndexes closes the bleve indexes unless a query uses them.
func (g *Generation) closeIdleIndexes() {
	g.indexMu.Lock()
	defer g.indexMu.Unlock()
	if g.indexUses > 0 || g.closed {
		return
	}
	for c, idx := range g.indexes {
		_ = idx.Close()
		delete(g.indexes, c)
	}
}

// openIndexes opens every category's bleve index now rather than on first
// use.
func (g *Generation) openIndexes() error {
	for c := range g.Meta.Counts {
		if g.TablesAnswer(c) {
			continue
		}
		if _, err := g.Index(c); err != nil {
			return err
		}
	}
	return nil
}

// countDocuments opens a category's bleve shards, counts their documents
// and closes them again (so checking a generation leaves them unmapped).
func (g *Generation) countDocuments(c snapshots.Category) (uint64, error) {
	idx, err := g.openCategory(c)
	if err != nil {
		return 0, err
	}
	n, err := idx.DocCount()
	if cerr := idx.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", c, err)
	}
	return n, nil
}

func openShards(cdir string, n int) (bleve.Index, error) {
	a := &shardAlias{IndexAlias: bleve.NewIndexAlias()}
	for s := 0; s < n; s++ {
		idx, err := bleve.OpenUsing(shardDir(cdir, s), map[string]interface{}{"read_only": true})
		if err != nil {
			a.Close()
			return nil, err
		}
		a.shards = append(a.shards, idx)
		a.Add(idx)
	}
	return a, nil
}

// shardAlias searches a category's shards as one index and closes them
// with it (a plain IndexAlias leaves them open).
type shardAlias struct {
	bleve.IndexAlias
	shards []bleve.Index
}

func (a *shardAlias) Close() error {
	var first error
	for _, idx := range a.shards {
		if err := idx.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func shardDir(cdir string, s int) string { return filepath.Join(cdir, fmt.Sprintf("bleve-%d", s)) }
