package query

import (
	"runtime"
	"sync"

	"gds/indexer/recstore"
	"gds/snapshots"
)

// Affiliation is whom a character belongs to, as ESI's POST
// /characters/affiliation/ answers it: its corporation, its alliance (as
// the character's record has it) and its corporation's faction.
type Affiliation struct {
	CharacterID   int64 `json:"character_id"`
	CorporationID int64 `json:"corporation_id"`
	AllianceID    int64 `json:"alliance_id,omitempty"`
	FactionID     int64 `json:"faction_id,omitempty"`
}

// Affiliations returns the affiliation of each of ids, in the order of
// ids, in out (reused when it has room); missing is the index in ids of
// the first ID that is no character (nor agent, which ESI counts as
// characters), or -1. From the affiliation columns where the generation
// has them (affcolumns.go); else each character is one record-store lookup read
// without decoding (snapshots.DecodeAffiliation), and each corporation's
// faction is remembered for the generation. A record-store lookup
// decompresses the record's block, so a large batch is split among the
// processors.
func (v *View) Affiliations(ids []int64, out []Affiliation) (_ []Affiliation, missing int, err error) {
	if cap(out) < len(ids) {
		out = make([]Affiliation, len(ids))
	}
	out = out[:len(ids)]
	if cols, ok := v.affColumns(); ok {
		return out, cols.affiliationsFrom(ids, out), nil
	}
	memo := v.factionMemo()
	workers := min(runtime.GOMAXPROCS(0), len(ids)/affiliationsPerWorker)
	if workers <= 1 {
		missing, err = v.affiliations(ids, out, memo)
		return out, missing, err
	}
	missings, errs := make([]int, workers), make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(ids)/workers, (w+1)*len(ids)/workers
		wg.Go(func() {
			missings[w], errs[w] = v.affiliations(ids[lo:hi], out[lo:hi], memo)
			if missings[w] >= 0 {
				missings[w] += lo
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			return out, -1, errs[w]
		}
		if missings[w] >= 0 {
			return out, missings[w], nil
		}
	}
	return out, -1, nil
}

// affiliationsPerWorker is the smallest share of a batch worth a
// goroutine: a lookup takes microseconds, starting a goroutine about one.
const affiliationsPerWorker = 128

// affiliations fills out[i] with the affiliation of ids[i].
func (v *View) affiliations(ids []int64, out []Affiliation, memo *factionMemo) (missing int, err error) {
	chars, agents, corps := v.g.Store(snapshots.Characters), v.g.Store(snapshots.Agents), v.g.Store(snapshots.Corporations)
	for i, id := range ids {
		a, ok, err := affiliationOf(chars, snapshots.Characters, id)
		if err == nil && !ok {
			a, ok, err = affiliationOf(agents, snapshots.Agents, id)
		}
		if err != nil {
			return -1, err
		}
		if !ok || a.CorporationID <= 0 {
			return i, nil
		}
		faction, err := memo.of(corps, a.CorporationID)
		if err != nil {
			return -1, err
		}
		out[i] = Affiliation{CharacterID: id, CorporationID: a.CorporationID, AllianceID: a.AllianceID, FactionID: faction}
	}
	return -1, nil
}

// affiliationOf reads the affiliation of record id of kind from s (nil:
// the generation has no such records); ok is false when there is none.
func affiliationOf(s *recstore.Store, kind snapshots.Kind, id int64) (a snapshots.Affiliation, ok bool, err error) {
	if s == nil {
		return a, false, nil
	}
	ok, err = s.Get(id, func(raw []byte) error {
		var fast bool
		if a, fast = snapshots.DecodeAffiliation(raw); fast {
			return nil
		}
		var err error
		a, err = decodeAffiliation(raw, kind)
		return err
	})
	if !ok {
		return a, false, nil
	}
	return a, true, recordErr(kind, id, ok, err)
}

// decodeAffiliation decodes a record line whole, for the lines
// DecodeAffiliation declines (localized names, descriptions).
func decodeAffiliation(raw []byte, kind snapshots.Kind) (snapshots.Affiliation, error) {
	rec := kind.New()
	if err := snapshots.DecodeRecord(raw, rec); err != nil {
		return snapshots.Affiliation{}, err
	}
	switch r := rec.(type) {
	case *snapshots.Character:
		return snapshots.Affiliation{CorporationID: r.CorporationID, AllianceID: r.AllianceID, FactionID: r.FactionID}, nil
	case *snapshots.Agent:
		return snapshots.Affiliation{CorporationID: r.CorporationID}, nil
	case *snapshots.Corporation:
		return snapshots.Affiliation{AllianceID: r.AllianceID, FactionID: r.FactionID}, nil
	}
	return snapshots.Affiliation{}, nil
}

// factionMemo remembers the factions of the corporations affiliations
// met in one generation: a thousand characters belong to far fewer
// corporations, and most requests ask about the same ones again. At most
// maxMemoCorporations are kept (about 40 bytes each).
type factionMemo struct {
	gen uint64
	mu  sync.RWMutex
	m   map[int64]int64
}

const maxMemoCorporations = 1 << 20

// factionMemo is the view's generation's memo, from its Searcher (a fresh
// one for a view without).
func (v *View) factionMemo() *factionMemo {
	gen := v.g.Meta.ID
	if v.s == nil {
		return &factionMemo{gen: gen, m: map[int64]int64{}}
	}
	for {
		old := v.s.factions.Load()
		if old != nil && old.gen >= gen {
			if old.gen == gen {
				return old
			}
			// A view of the previous generation, still answering.
			return &factionMemo{gen: gen, m: map[int64]int64{}}
		}
		memo := &factionMemo{gen: gen, m: map[int64]int64{}}
		if v.s.factions.CompareAndSwap(old, memo) {
			return memo
		}
	}
}

// of is the faction of corporation (0: none, or no such corporation).
func (fm *factionMemo) of(corps *recstore.Store, corporation int64) (int64, error) {
	fm.mu.RLock()
	f, ok := fm.m[corporation]
	fm.mu.RUnlock()
	if ok {
		return f, nil
	}
	a, _, err := affiliationOf(corps, snapshots.Corporations, corporation)
	if err != nil {
		return 0, err
	}
	fm.mu.Lock()
	if len(fm.m) < maxMemoCorporations {
		fm.m[corporation] = a.FactionID
	}
	fm.mu.Unlock()
	return a.FactionID, nil
}
