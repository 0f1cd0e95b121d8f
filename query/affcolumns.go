package query

import (
	"fmt"
	"runtime"
	"unsafe"

	"gds/indexer/affcol"
	"gds/indexer/recstore"
	"gds/snapshots"
)

// A generation written with affiliation columns (indexer/affcol) answers
// affiliations and locals from them: a character is its store's key
// search plus one read of its column's row at that position, a
// corporation's faction and a group's name and ticker the same in their
// kinds' columns. A generation without them (built before them, or
// adopted from an older indexer) is answered from the records
// (affiliation.go, local.go, localdir.go).

// columned is a kind's store with its column; the zero value is a kind
// the generation has no records of.
type columned struct {
	s *recstore.Store
	c *affcol.Column
}

// columnOf returns kind's store and column; ok is false when the kind
// has records but no column (the records answer then).
func (v *View) columnOf(kind snapshots.Kind) (columned, bool) {
	s := v.g.Store(kind)
	if s == nil {
		return columned{}, true
	}
	c := v.g.Affiliations(kind)
	return columned{s: s, c: c}, c != nil
}

// find returns the position of key in the store; false when there is none.
func (k columned) find(key int64) (int, bool) {
	if k.s == nil {
		return 0, false
	}
	return k.s.Find(key)
}

// positions returns the store positions of keys (-1 for a key of no
// record) with their rows warmed in the column: a batch's cache misses
// overlap instead of coming one after another (recstore.FindAll,
// affcol.Column.Warm). The slice is intScratch's, for the caller to put.
func (k columned) positions(keys []int64) *[]int {
	posP := intScratch.get(len(keys))
	pos := *posP
	if k.s == nil {
		for j := range pos {
			pos[j] = -1
		}
		return posP
	}
	k.s.FindAll(keys, pos)
	if k.c != nil {
		runtime.KeepAlive(k.c.Warm(pos))
	}
	return posP
}

// affColumns are the columns an affiliation reads.
type affColumns struct{ chars, agents, corps columned }

// affColumns returns the columns of the view's generation; false when one
// of them is missing.
func (v *View) affColumns() (a affColumns, ok bool) {
	var ok1, ok2, ok3 bool
	a.chars, ok1 = v.columnOf(snapshots.Characters)
	a.agents, ok2 = v.columnOf(snapshots.Agents)
	a.corps, ok3 = v.columnOf(snapshots.Corporations)
	return a, ok1 && ok2 && ok3
}

// affiliationsFrom fills out (as long as ids) from the columns; missing
// is the index of the first ID that is no character, or -1.
func (a affColumns) affiliationsFrom(ids []int64, out []Affiliation) (missing int) {
	for i, id := range ids {
		var corp, alliance int64
		if p, ok := a.chars.find(id); ok {
			corp, alliance, _ = a.chars.c.IDs(p)
		} else if p, ok := a.agents.find(id); ok {
			corp, alliance, _ = a.agents.c.IDs(p)
		}
		if corp <= 0 {
			return i
		}
		var faction int64
		if p, ok := a.corps.find(corp); ok {
			_, _, faction = a.corps.c.IDs(p)
		}
		out[i] = Affiliation{CharacterID: id, CorporationID: corp, AllianceID: alliance, FactionID: faction}
	}
	return -1
}

// localCharactersFrom reads the characters of ids from their column into
// out (as long as ids), leaving an ID of no character's entry zero. The
// names are substrings of one string.
func localCharactersFrom(k columned, ids []int64, out []LocalCharacter) error {
	text := make([]byte, 0, len(ids)*nameBytes)
	ends, pos := uint32Scratch.get(len(ids)), k.positions(ids)
	defer uint32Scratch.put(ends)
	defer intScratch.put(pos)
	for j, p := range *pos {
		if id := ids[j]; p >= 0 {
			corp, alliance, faction := k.c.IDs(p)
			name, _, err := k.c.Text(p)
			if err != nil {
				return recordErr(snapshots.Characters, id, true, err)
			}
			text = append(text, name...)
			out[j] = LocalCharacter{CharacterID: id, CorporationID: corp, AllianceID: alliance, FactionID: faction}
		}
		(*ends)[j] = uint32(len(text))
	}
	all, start := frozen(text), uint32(0)
	for j, end := range *ends {
		out[j].Name, start = all[start:end], end
	}
	return nil
}

// frozen is b's bytes as a string, without a copy: its callers build b
// and never write it again.
func frozen(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// nameBytes and tickerBytes are room enough for most names and tickers
// (the game's names are at most 37 characters, tickers 5), so that the
// text of a thousand rows grows once or not at all.
const nameBytes, tickerBytes = 32, 8

// groups reads the rows of the n IDs id(0), …, id(n-1), passing each
// one found to set; the names and tickers are substrings of one string.
func (k columned) groups(kind snapshots.Kind, n int, id func(int) int64, set func(int, groupName)) error {
	text := make([]byte, 0, n*(nameBytes+tickerBytes))
	endsP, keysP, alliancesP := uint32Scratch.get(2*n), int64Scratch.get(n), int64Scratch.get(n)
	defer uint32Scratch.put(endsP)
	defer int64Scratch.put(keysP)
	defer int64Scratch.put(alliancesP)
	ends, keys, alliances := *endsP, *keysP, *alliancesP
	for j := range keys {
		keys[j] = id(j)
	}
	posP := k.positions(keys)
	defer intScratch.put(posP)
	pos := *posP
	for j, p := range pos {
		if p >= 0 {
			name, ticker, err := k.c.Text(p)
			if err != nil {
				return fmt.Errorf("local: %w", recordErr(kind, keys[j], true, err))
			}
			text = append(text, name...)
			ends[2*j] = uint32(len(text))
			text = append(text, ticker...)
			_, alliances[j], _ = k.c.IDs(p)
		} else {
			ends[2*j] = uint32(len(text))
		}
		ends[2*j+1] = uint32(len(text))
	}
	all, start := frozen(text), uint32(0)
	for j, p := range pos {
		if p >= 0 {
			set(j, groupName{all[start:ends[2*j]], all[ends[2*j]:ends[2*j+1]], alliances[j]})
		}
		start = ends[2*j+1]
	}
	return nil
}
