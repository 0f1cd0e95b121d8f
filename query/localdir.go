package query

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"gds/indexer/recstore"
	"gds/snapshots"
)

// A generation without affiliation columns (affcolumns.go; one written
// before them) names a local's groups from here. A local of a thousand
// pilots names as many corporations: read from the
// record store one by one, they would cost more than everything else the
// local does. So the first local over a generation has a directory of its
// corporations and alliances (name, ticker, alliance, by store position)
// built in the background from their stores, read once in order; locals
// read it from then on, and the record stores until it is ready. It takes
// about 60 bytes a corporation (12 MB for 200,000).

// groupDir holds, for each record of one store, its name, ticker and
// alliance: names and tickers are substrings of one string, so an answer
// takes them without copying.
type groupDir struct {
	store    *recstore.Store // the store it was read from (identity)
	text     string
	entries  []groupEntry
	alliance []int64 // per position; nil for alliances
}

type groupEntry struct {
	off             uint32
	nameLen, ticker uint16
}

// name and ticker of the record at position i.
func (d *groupDir) get(i int) (name, ticker string) {
	e := d.entries[i]
	name = d.text[e.off : e.off+uint32(e.nameLen)]
	return name, d.text[e.off+uint32(e.nameLen) : e.off+uint32(e.nameLen)+uint32(e.ticker)]
}

// localDirs are a Searcher's directories, one per kind, and whether one
// is being read.
type localDirs struct {
	corporations, alliances atomic.Pointer[groupDir]
	building                sync.Mutex // held while a directory is read
	pending                 atomic.Bool
	// sync makes dir read a missing directory before answering rather
	// than in the background (tests and benchmarks of the steady state).
	sync bool
}

// dir returns the directory of kind for store s when it is ready; else
// nil, after starting to read it (once at a time).
func (v *View) dir(kind snapshots.Kind, s *recstore.Store) *groupDir {
	if v.s == nil || s == nil {
		return nil
	}
	ptr := &v.s.dirs.corporations
	if kind == snapshots.Alliances {
		ptr = &v.s.dirs.alliances
	}
	if d := ptr.Load(); d != nil && d.store == s {
		return d
	}
	if v.s.dirs.sync {
		v.s.dirs.building.Lock()
		defer v.s.dirs.building.Unlock()
		if d := ptr.Load(); d != nil && d.store == s {
			return d
		}
		d := readGroupDir(s, kind)
		ptr.Store(d)
		return d
	}
	if v.s.dirs.pending.CompareAndSwap(false, true) {
		go v.s.buildDirs()
	}
	return nil
}

// buildDirs reads the directories of the live generation's corporations
// and alliances, holding the generation while it does.
func (s *Searcher) buildDirs() {
	defer s.dirs.pending.Store(false)
	s.dirs.building.Lock()
	defer s.dirs.building.Unlock()
	g := s.m.Acquire()
	if g == nil {
		return
	}
	defer g.Release()
	for _, k := range []struct {
		kind snapshots.Kind
		ptr  *atomic.Pointer[groupDir]
	}{{snapshots.Corporations, &s.dirs.corporations}, {snapshots.Alliances, &s.dirs.alliances}} {
		st := g.Store(k.kind)
		if st == nil {
			continue
		}
		if d := k.ptr.Load(); d != nil && d.store == st {
			continue
		}
		if d := readGroupDir(st, k.kind); d != nil {
			k.ptr.Store(d)
		}
	}
}

// groupFields are what a directory keeps of a corporation or alliance.
type groupFields struct {
	Name       string `json:"name"`
	Ticker     string `json:"ticker"`
	AllianceID int64  `json:"alliance_id"`
}

// readGroupDir reads every record of s; nil when one does not read (the
// locals then read the store, and say what is wrong).
func readGroupDir(s *recstore.Store, kind snapshots.Kind) *groupDir {
	n := s.Len()
	d := &groupDir{store: s, entries: make([]groupEntry, n)}
	if kind == snapshots.Corporations {
		d.alliance = make([]int64, n)
	}
	var b strings.Builder
	for i := range n {
		var f groupFields
		err := s.Read(i, func(raw []byte) error { return json.Unmarshal(raw, &f) })
		if err != nil || len(f.Name) > 1<<15 || len(f.Ticker) > 1<<15 || b.Len() > 1<<31 {
			return nil
		}
		d.entries[i] = groupEntry{off: uint32(b.Len()), nameLen: uint16(len(f.Name)), ticker: uint16(len(f.Ticker))}
		b.WriteString(f.Name)
		b.WriteString(f.Ticker)
		if d.alliance != nil {
			d.alliance[i] = f.AllianceID
		}
	}
	d.text = b.String()
	return d
}
