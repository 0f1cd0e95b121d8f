package indexer

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// The analysts' bleve queries run in package query (analyst.Engine); this
// file opens a data directory's live generation for tools that only read.

// OpenReadOnly opens the live generation of dataDir for reading only, for
// tools such as gds query that run beside a server on the same data
// directory. Unlike Open it changes nothing on disk: it neither removes
// unfinished builds nor retired generations, and bleve opens the shards
// with read_only (a shared lock), so any number of processes may hold the
// same generation. The caller must Release the generation.
func OpenReadOnly(dataDir string) (*Generation, error) {
	m := &Manager{opts: Options{DataDir: dataDir}}
	var lastErr error
	// A server may switch generations and delete the old one between our
	// reading CURRENT and opening it; then CURRENT has moved on, so retry.
	for range 3 {
		id, err := m.readCurrent()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", dataDir, ErrNoGeneration)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading %s: %w", dataDir, currentFile, err)
		}
		id = analystsGeneration(dataDir, id)
		g, err := openGeneration(generationDir(dataDir, id), 0, inMemory{}) // a tool's short-lived handle
		if err == nil {
			// Open every bleve index now, while the generation is
			// certainly there: a server may delete it once it moves on.
			if err = g.openIndexes(); err == nil {
				return g, nil
			}
			g.Release()
		}
		lastErr = err
		if again, rerr := m.readCurrent(); rerr == nil && again == id {
			break // not a race: the generation itself is unreadable
		}
	}
	return nil, lastErr
}

// UnfinishedBuilds lists the directories of builds in dataDir that have
// not completed: builds running now, in this or another process, or left
// over from a crash (Open removes those). Read-only.
func UnfinishedBuilds(dataDir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dataDir, generationsIn, "*"+buildingExt))
}
