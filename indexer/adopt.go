package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gds/indexer/nametable"
	"gds/snapshots/disk"
)

// ErrNotNewer is returned by Adopt for a generation that is not newer than
// the live one: generation numbers only grow.
var ErrNotNewer = errors.New("generation is not newer than the live one")

// MetaFile is the name of a generation's metadata file (its Meta as
// JSON), written last by a build.
const MetaFile = metaFile

// GenerationID reads the number a complete generation directory records.
func GenerationID(dir string) (uint64, error) {
	m, err := readMeta(dir)
	return m.ID, err
}

// Adopt makes a complete generation built elsewhere live, as a local build
// does: dir (on the data directory's file system) holds every file of the
// generation, generation.json included. It is moved into place under the
// number its Meta records, opened and checked (every category's tables and
// bleve documents match the Meta's counts), CURRENT is rewritten and the
// generation swapped in. On any error the live generation keeps serving
// and dir is left where it was, unless it was already moved (then it is
// removed).
func (m *Manager) Adopt(ctx context.Context, dir string) (Meta, error) {
	meta, err := readMeta(dir)
	if err != nil {
		return Meta{}, err
	}
	if meta.ID == 0 {
		return Meta{}, errors.New("generation has no number")
	}
	if err := readable(meta); err != nil {
		return Meta{}, fmt.Errorf("generation %d: %w", meta.ID, err)
	}
	if live := m.Live(); live != nil && meta.ID <= live.ID {
		return Meta{}, fmt.Errorf("generation %d: %w (%d)", meta.ID, ErrNotNewer, live.ID)
	}
	lock, err := lockBuilds(ctx, m.opts.DataDir, nil)
	if err != nil {
		return Meta{}, err
	}
	defer lock.Unlock()
	final := generationDir(m.opts.DataDir, meta.ID)
	if _, err := os.Lstat(final); err == nil {
		// Left over from an earlier attempt that failed its check, or a
		// local build that took the number: neither is serving.
		if err := os.RemoveAll(final); err != nil {
			return Meta{}, err
		}
	}
	if err := os.Rename(dir, final); err != nil {
		return Meta{}, err
	}
	gen, err := openGeneration(final, m.opts.AnalystIdle, m.opts.inMemory())
	if err == nil {
		// No snapshot beside it: the tables were checked when it opened,
		// its bleve shards are checked against their counts.
		err = checkBleve(gen, "meta says")
	}
	if err != nil {
		if gen != nil {
			gen.remove = true
			gen.Release()
		}
		_ = os.RemoveAll(final)
		return Meta{}, fmt.Errorf("check of generation %d: %w", meta.ID, err)
	}
	if err := disk.WriteFileAtomic(filepath.Join(m.opts.DataDir, currentFile), []byte(strconv.FormatUint(meta.ID, 10)+"\n"), disk.PrivateFile); err != nil {
		gen.remove = true
		gen.Release()
		return Meta{}, err
	}
	m.ReserveIDs(meta.ID)
	m.swap(gen)
	m.log.Info().Uint64("generation", meta.ID).Str("snapshot", meta.Snapshot).Msg("adopted generation live")
	return gen.Meta, nil
}

// Readable checks a generation's metadata (its generation.json) before
// its files are fetched: the error says why Adopt would refuse it.
func Readable(metaJSON []byte) error {
	var meta Meta
	if err := json.Unmarshal(metaJSON, &meta); err != nil {
		return fmt.Errorf("%s: %w", metaFile, err)
	}
	return readable(meta)
}

// readable refuses a generation this gds would answer wrongly (see
// misread), saying what to run instead.
func readable(meta Meta) error {
	err := misread(meta)
	switch {
	case err == nil:
		return nil
	case meta.Fold != nametable.FoldVersion:
		return fmt.Errorf("%w: run the same gds version as the indexer", err)
	}
	return fmt.Errorf("%w: upgrade this gds", err)
}

// misread says why this gds would answer a generation wrongly: names
// folded otherwise than it folds search text, or analysts' documents of a
// layout newer than it knows (their ranges may need terms it does not look
// up). Older layouts are read alike.
func misread(meta Meta) error {
	switch {
	case meta.Fold != nametable.FoldVersion:
		return fmt.Errorf("its names are folded by version %d, this gds folds by %d", max(meta.Fold, 1), nametable.FoldVersion)
	case meta.Fields > FieldsVersion:
		return fmt.Errorf("its analysts' documents have layout %d, newer than this gds reads (%d)", meta.Fields, FieldsVersion)
	}
	return nil
}

// LiveMisread says why this gds answers the live generation wrongly (see
// misread), or nil. Open serves such a generation all the same, as the
// best there is, until a build or an adopted generation replaces it.
func (m *Manager) LiveMisread() error {
	live := m.Live()
	if live == nil {
		return nil
	}
	return misread(*live)
}

// ReserveIDs makes the next build take a number above after, so the
// generations of an indexer that publishes keep growing past those it
// published before (even from an emptied data directory).
func (m *Manager) ReserveIDs(after uint64) {
	m.mu.Lock()
	m.nextID = max(m.nextID, after)
	m.mu.Unlock()
}
