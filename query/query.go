// Package query answers requests over the live index generation: name
// searches (contains or strict, per category, ranked, capped, stopping
// early) and the record lookups that resolve the IDs a search returns.
package query

import (
	"errors"
	"time"

	"gds/indexer/nametable"
	"gds/snapshots"
)

// MaxResults is the most IDs a search returns per category, as ESI does.
const MaxResults = 500

// MinTextRunes is the shortest search text accepted, in runes after trimming.
const MinTextRunes = 3

// Request is one search.
type Request struct {
	// Text is what to look for; it is trimmed and case-folded.
	Text string
	// Categories to search; structure needs CharacterID.
	Categories []snapshots.Category
	// Strict asks for whole-name equality instead of contains.
	Strict bool
	// Language picks localized names: en (default), de, es, fr, ja, ko, ru,
	// zh; "en-us" means en. A category without localized names uses its
	// single name.
	Language string
	// CharacterID is the calling character, or 0 for a public search. The
	// structure category only returns structures it may access.
	CharacterID int64
	// Limit caps IDs per category; 0 or more than MaxResults means
	// MaxResults.
	Limit int
}

// Result is the answer to a Request.
type Result struct {
	// IDs holds, per category with at least one match, the matching IDs in
	// rank order: exact name first, then names starting with the text, then
	// the rest; shorter names first within each; then lower ID.
	IDs map[snapshots.Category][]int64
	// Generation is the index generation that answered.
	Generation GenerationInfo
	// Stats says what the search did.
	Stats Stats
}

// Stats reports the work a search did, so a slow one explains itself.
type Stats struct {
	// Candidates counts documents taken from posting lists.
	Candidates int
	// Verified counts names compared against the text.
	Verified int
	// Steps counts container intersections: one posting list's part of
	// one 65,536-ordinal block intersected with the other lists' parts.
	Steps int
	// Matches counts IDs returned over all categories.
	Matches int
	// Duration is the wall time of the search.
	Duration time.Duration
}

// addWalk adds the work of table walks.
func (s *Stats) addWalk(w nametable.Stats) {
	s.Candidates += w.Candidates
	s.Verified += w.Verified
	s.Steps += w.Steps
}

// GenerationInfo identifies the generation that answered, for cache
// validators (ETag, Last-Modified).
type GenerationInfo struct {
	ID      uint64
	Created time.Time
	// SnapshotHash is the manifest hash of the snapshot it was built from.
	SnapshotHash string
}

// Errors callers map to client answers.
var (
	// ErrTextTooShort: the text has fewer than MinTextRunes runes.
	ErrTextTooShort = errors.New("search text must be at least 3 characters")
	// ErrNotReady: no generation is live yet.
	ErrNotReady = errors.New("no index generation is live yet")
	// ErrNotFound: no record has that key.
	ErrNotFound = errors.New("not found")
	// ErrDamaged: a record store's index places a record outside its data
	// files (the files changed after the build).
	ErrDamaged = errors.New("record lies outside the record store's data files")
)

// NormalizeLanguage maps an ESI language value to a snapshot language code,
// reporting false for an unknown one. "" and "en-us" mean "en".
func NormalizeLanguage(lang string) (string, bool) {
	switch lang {
	case "", "en-us", "en":
		return "en", true
	}
	if snapshots.IsLanguage(lang) {
		return lang, true
	}
	return "", false
}
