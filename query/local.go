package query

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/nametable"
	"gds/indexer/recstore"
	"gds/snapshots"
)

// A local is what a fleet commander pastes from the game's chat member
// list: the names of the pilots in a channel. View.Local resolves them as
// POST /universe/ids/ does (exact, ignoring case) and counts them by
// corporation and alliance.

// MaxLocalNames is the most names one local may hold.
const MaxLocalNames = 1000

// LocalCharacter is one pilot of a local, with its affiliation.
type LocalCharacter struct {
	CharacterID   int64  `json:"character_id"`
	Name          string `json:"name"`
	CorporationID int64  `json:"corporation_id"`
	AllianceID    int64  `json:"alliance_id,omitempty"`
	FactionID     int64  `json:"faction_id,omitempty"`
}

// LocalCorporation is a corporation of a local and how many of its pilots
// are there.
type LocalCorporation struct {
	CorporationID int64  `json:"corporation_id"`
	Name          string `json:"name"`
	Ticker        string `json:"ticker"`
	AllianceID    int64  `json:"alliance_id,omitempty"`
	Count         int    `json:"count"`
}

// LocalAlliance is an alliance of a local and how many of its pilots are
// there.
type LocalAlliance struct {
	AllianceID int64  `json:"alliance_id"`
	Name       string `json:"name"`
	Ticker     string `json:"ticker"`
	Count      int    `json:"count"`
}

// Local is the breakdown of a pasted list of names: its pilots by name,
// their corporations and alliances by count (most first, then by name),
// and the names that are no character's, as pasted.
type Local struct {
	Characters   []LocalCharacter   `json:"characters"`
	Corporations []LocalCorporation `json:"corporations"`
	Alliances    []LocalAlliance    `json:"alliances"`
	Unknown      []string           `json:"unknown"`
}

// Local resolves names (each trimmed; blank ones skipped) to characters
// and groups them. A name that several characters share finds each of
// them (up to MaxLocalNamesakes); a character named twice counts once. A record a store cannot read
// fails the call.
func (v *View) Local(names []string) (Local, error) {
	idsP, keptP, foldedP, bufP := int64Scratch.get(0), stringScratch.get(0), bytesScratch.get(0), byteScratch.get(0)
	defer func() {
		int64Scratch.put(idsP)
		stringScratch.put(keptP)
		bytesScratch.put(foldedP)
		byteScratch.put(bufP)
	}()
	var unknown []string
	ct := v.g.Tables(snapshots.CategoryCharacter)
	*keptP, *foldedP, *bufP = foldAll(names, *keptP, *foldedP, *bufP)
	kept, folded := *keptP, *foldedP
	if ct != nil {
		// The lookups' first reads, all at once: their cache misses
		// overlap.
		touch := ct.Base.Warm(folded)
		if ct.Delta != nil {
			touch += ct.Delta.Warm(folded)
		}
		runtime.KeepAlive(touch)
	}
	ids := *idsP
	for i, name := range kept {
		n := len(ids)
		if ct != nil {
			ids = exactIDs(ct.Base, ct.Delta, folded[i], ids)
		}
		if len(ids) == n {
			unknown = append(unknown, name)
		}
	}
	*idsP = ids
	out, err := v.LocalOf(ids)
	if err != nil {
		return Local{}, err
	}
	if unknown != nil {
		out.Unknown = compactStable(unknown)
	}
	return out, nil
}

// foldAll returns names trimmed, blank ones left out, and each one
// folded (slices of one buffer, sized for names that fold to as many
// bytes, as ASCII ones do), appended to kept and folded, emptied first;
// buf is the buffer's room.
func foldAll(names, kept []string, folded [][]byte, buf []byte) ([]string, [][]byte, []byte) {
	size := 0
	for _, name := range names {
		size += len(name)
	}
	kept, folded, buf = kept[:0], folded[:0], buf[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	for _, name := range names {
		if name = strings.TrimSpace(name); name != "" {
			start := len(buf)
			buf = nametable.AppendFold(buf, name)
			kept, folded = append(kept, name), append(folded, buf[start:len(buf):len(buf)])
		}
	}
	return kept, folded, buf
}

// LocalOf is the breakdown of the characters with the given IDs (in any
// order, repeats counted once; IDs of no character left out), with no
// unknown names.
func (v *View) LocalOf(ids []int64) (Local, error) {
	sorted, buf := int64Scratch.get(len(ids)), int64Scratch.get(len(ids))
	defer int64Scratch.put(sorted)
	defer int64Scratch.put(buf)
	copy(*sorted, ids)
	radixSort(*sorted, *buf)
	ids = slices.Compact(*sorted)
	out := Local{Unknown: []string{}}
	var err error
	if out.Characters, err = v.localCharacters(ids); err != nil {
		return Local{}, err
	}
	if out.Corporations, out.Alliances, err = v.groups(out.Characters); err != nil {
		return Local{}, err
	}
	sortCharacters(out.Characters)
	return out, nil
}

// sortCharacters orders a local's pilots by name, then ID.
func sortCharacters(chars []LocalCharacter) {
	sortLocal(chars, func(*LocalCharacter) uint32 { return 0 },
		func(c *LocalCharacter) string { return c.Name },
		func(a, b *LocalCharacter) int {
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
			return cmp.Compare(a.CharacterID, b.CharacterID)
		})
}

// sortCorporations orders a local's corporations by count (most first),
// then name, then ID.
func sortCorporations(corps []LocalCorporation) {
	sortLocal(corps, func(c *LocalCorporation) uint32 { return byCountRank(c.Count) },
		func(c *LocalCorporation) string { return c.Name },
		func(a, b *LocalCorporation) int {
			return byCount(a.Count, b.Count, a.Name, b.Name, a.CorporationID, b.CorporationID)
		})
}

// sortAlliances orders a local's alliances as sortCorporations does.
func sortAlliances(alliances []LocalAlliance) {
	sortLocal(alliances, func(a *LocalAlliance) uint32 { return byCountRank(a.Count) },
		func(a *LocalAlliance) string { return a.Name },
		func(a, b *LocalAlliance) int {
			return byCount(a.Count, b.Count, a.Name, b.Name, a.AllianceID, b.AllianceID)
		})
}

// MaxLocalNamesakes is the most characters one name of a local finds. The
// game's names are unique; generated ones repeat, and a thousand common
// names would otherwise find tens of thousands of pilots.
const MaxLocalNamesakes = 10

// exactIDs appends the IDs of the names of base and delta equal to folded
// (base's names that delta replaced left out), at most MaxLocalNamesakes
// of them: the base's first (by ID), then the delta's.
func exactIDs(base, delta *nametable.Table, folded []byte, ids []int64) []int64 {
	var hidden *roaring.Bitmap
	if delta != nil {
		hidden = delta.Mask()
	}
	n := 0
	base.Exact(folded, func(o uint32, id int64) bool {
		if hidden == nil || !hidden.Contains(o) {
			ids = append(ids, id)
			n++
		}
		return n < MaxLocalNamesakes
	})
	if delta != nil && n < MaxLocalNamesakes {
		delta.Exact(folded, func(_ uint32, id int64) bool {
			ids = append(ids, id)
			n++
			return n < MaxLocalNamesakes
		})
	}
	return ids
}

// compactStable drops repeated strings, keeping each one's first place.
func compactStable(list []string) []string {
	seen := make(map[string]struct{}, len(list))
	out := list[:0]
	for _, s := range list {
		if _, dup := seen[s]; !dup {
			seen[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out
}

// localCharacters returns the characters with the given IDs, each with its
// name as the record spells it and its corporation, alliance and faction,
// in the order of ids; IDs of no character are left out. A long list is
// read by one goroutine per processor: each record is a block of the store
// to decompress, nearly all of a local's work.
func (v *View) localCharacters(ids []int64) ([]LocalCharacter, error) {
	out := make([]LocalCharacter, len(ids))
	s := v.g.Store(snapshots.Characters)
	if s == nil {
		return out[:0], nil
	}
	if k, ok := v.columnOf(snapshots.Characters); ok {
		if err := localCharactersFrom(k, ids, out); err != nil {
			return nil, err
		}
		return slices.DeleteFunc(out, func(c LocalCharacter) bool { return c.CharacterID == 0 }), nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(ids)/parallelReads)
	if workers <= 1 {
		if err := readAffiliations(s, ids, out); err != nil {
			return nil, err
		}
	} else {
		errs := make([]error, workers)
		var wg sync.WaitGroup
		per := (len(ids) + workers - 1) / workers
		for w := range workers {
			lo, hi := w*per, min((w+1)*per, len(ids))
			wg.Go(func() { errs[w] = readAffiliations(s, ids[lo:hi], out[lo:hi]) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}
	// A character whose record is missing (an ID of no character) is left
	// with ID 0.
	return slices.DeleteFunc(out, func(c LocalCharacter) bool { return c.CharacterID == 0 }), nil
}

// parallelReads is the fewest records one goroutine of localCharacters reads.
const parallelReads = 64

// readAffiliations reads the records of ids into out (same length).
func readAffiliations(s *recstore.Store, ids []int64, out []LocalCharacter) error {
	var a snapshots.Affiliation
	for j, id := range ids {
		ok, err := s.Get(id, func(raw []byte) error {
			var fast bool
			if a, fast = snapshots.DecodeAffiliation(raw); fast {
				return nil
			}
			var rec snapshots.Character
			err := snapshots.DecodeRecord(raw, &rec)
			a = snapshots.Affiliation{Name: rec.Name, CorporationID: rec.CorporationID, AllianceID: rec.AllianceID, FactionID: rec.FactionID}
			return err
		})
		if !ok {
			continue
		}
		if err := recordErr(snapshots.Characters, id, ok, err); err != nil {
			return err
		}
		out[j] = LocalCharacter{CharacterID: id, Name: a.Name, CorporationID: a.CorporationID,
			AllianceID: a.AllianceID, FactionID: a.FactionID}
	}
	return nil
}

// groups counts chars by corporation and by alliance and names each group
// from its record (a group whose record is missing keeps its ID, with no
// name or ticker).
func (v *View) groups(chars []LocalCharacter) ([]LocalCorporation, []LocalAlliance, error) {
	keysP := int64Scratch.get(0)
	defer int64Scratch.put(keysP)
	keys := (*keysP)[:0]
	for _, c := range chars {
		keys = append(keys, c.CorporationID)
	}
	corps := counted(keys, func(id int64, n int) LocalCorporation { return LocalCorporation{CorporationID: id, Count: n} })
	keys = keys[:0]
	for _, c := range chars {
		if c.AllianceID != 0 {
			keys = append(keys, c.AllianceID)
		}
	}
	alliances := counted(keys, func(id int64, n int) LocalAlliance { return LocalAlliance{AllianceID: id, Count: n} })
	*keysP = keys
	if err := v.nameCorporations(corps); err != nil {
		return nil, nil, err
	}
	if err := v.nameAlliances(alliances); err != nil {
		return nil, nil, err
	}
	sortCorporations(corps)
	sortAlliances(alliances)
	return corps, alliances, nil
}

// counted sorts keys and returns group(id, n) for each distinct key, n
// the times it is there, in ascending order of key: a sort of a thousand
// IDs costs less than a map of them.
func counted[G any](keys []int64, group func(id int64, n int) G) []G {
	buf := int64Scratch.get(len(keys))
	radixSort(keys, *buf)
	int64Scratch.put(buf)
	distinct := 0
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			distinct++
		}
	}
	out := make([]G, 0, distinct)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		out = append(out, group(keys[i], j-i))
		i = j
	}
	return out
}

// byCount orders groups by count (most first), then name, then ID.
func byCount(countA, countB int, nameA, nameB string, idA, idB int64) int {
	if c := cmp.Compare(countB, countA); c != 0 {
		return c
	}
	if c := strings.Compare(nameA, nameB); c != 0 {
		return c
	}
	return cmp.Compare(idA, idB)
}

// nameCorporations fills in each corporation's name, ticker and alliance.
func (v *View) nameCorporations(corps []LocalCorporation) error {
	return nameGroups(v, snapshots.Corporations, len(corps),
		func(i int) int64 { return corps[i].CorporationID },
		func(c *snapshots.Corporation) groupName { return groupName{c.Name, c.Ticker, c.AllianceID} },
		func(i int, g groupName) {
			corps[i].Name, corps[i].Ticker, corps[i].AllianceID = g.name, g.ticker, g.alliance
		})
}

// nameAlliances fills in each alliance's name and ticker.
func (v *View) nameAlliances(alliances []LocalAlliance) error {
	return nameGroups(v, snapshots.Alliances, len(alliances),
		func(i int) int64 { return alliances[i].AllianceID },
		func(a *snapshots.Alliance) groupName { return groupName{name: a.Name, ticker: a.Ticker} },
		func(i int, g groupName) { alliances[i].Name, alliances[i].Ticker = g.name, g.ticker })
}

// groupName is what a local says of a corporation or an alliance: its name,
// its ticker and, for a corporation, its alliance.
type groupName struct {
	name, ticker string
	alliance     int64
}

// nameGroups names the n groups of kind whose IDs are id(0), …, id(n-1),
// passing each one found to set: from the affiliation column, else from
// the directory when it is ready, else from the store, whose records
// (R, a Corporation or an Alliance) named reads.
func nameGroups[R any, P interface {
	*R
	snapshots.Record
}](v *View, kind snapshots.Kind, n int, id func(int) int64, named func(P) groupName, set func(int, groupName)) error {
	st := v.g.Store(kind)
	if k, ok := v.columnOf(kind); ok {
		return k.groups(kind, n, id, set)
	}
	d := v.dir(kind, st)
	for i := range n {
		if d != nil {
			if p, ok := st.Find(id(i)); ok {
				var g groupName
				g.name, g.ticker = d.get(p)
				if d.alliance != nil {
					g.alliance = d.alliance[p]
				}
				set(i, g)
			}
			continue
		}
		var rec R
		found, err := v.group(kind, id(i), P(&rec))
		if err != nil {
			return err
		}
		if found {
			set(i, named(&rec))
		}
	}
	return nil
}

// group decodes the record of kind with key id into rec; false when there
// is none.
func (v *View) group(kind snapshots.Kind, id int64, rec snapshots.Record) (bool, error) {
	s := v.g.Store(kind)
	if s == nil {
		return false, nil
	}
	ok, err := s.Get(id, func(raw []byte) error { return snapshots.DecodeRecord(raw, rec) })
	if !ok {
		return false, nil
	}
	if err := recordErr(kind, id, ok, err); err != nil {
		return false, fmt.Errorf("local: %w", err)
	}
	return true, nil
}

// MaxLocalNameRunes is the longest name a local may hold, in characters
// (as POST /universe/ids/ takes).
const MaxLocalNameRunes = 100

// LineError is a problem with one line of a pasted local.
type LineError struct {
	Line int // 1-based
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Errors of LocalLines that concern the whole text.
var (
	ErrLocalEmpty    = errors.New("no names; paste one name a line")
	ErrLocalTooLarge = fmt.Errorf("more than %d names", MaxLocalNames)
)

// LocalLines splits a pasted local, valid UTF-8 text, into its names: one
// a line as the game's chat member list copies them, each trimmed, blank
// lines skipped (and a leading byte-order mark). It refuses more than
// MaxLocalNames names (ErrLocalTooLarge), a name over MaxLocalNameRunes
// characters (a *LineError) and a text without names (ErrLocalEmpty).
func LocalLines(text string) ([]string, error) {
	text = strings.TrimPrefix(text, "\uFEFF")
	names := make([]string, 0, min(strings.Count(text, "\n")+1, MaxLocalNames))
	line := 0
	for raw := range strings.SplitSeq(text, "\n") {
		line++
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		if len(names) == MaxLocalNames {
			return nil, ErrLocalTooLarge
		}
		if n := utf8.RuneCountInString(name); n > MaxLocalNameRunes {
			return nil, &LineError{Line: line, Msg: fmt.Sprintf("a name of %d characters, at most %d", n, MaxLocalNameRunes)}
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, ErrLocalEmpty
	}
	return names, nil
}
