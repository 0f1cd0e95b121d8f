package query

import (
	"gds/indexer/nametable"
	"gds/snapshots"
)

// CharacterTableForTest is the base character table of the live
// generation (names folded, as searched), for tests that draw names.
func CharacterTableForTest(s *Searcher) *nametable.Table {
	g := s.m.Acquire()
	if g == nil {
		return nil
	}
	defer g.Release()
	ct := g.Tables(snapshots.CategoryCharacter)
	if ct == nil {
		return nil
	}
	return ct.Base
}

// LocalDirsNowForTest makes locals read the corporations' and alliances'
// directories before answering instead of in the background.
func LocalDirsNowForTest(s *Searcher) { s.dirs.sync = true }
