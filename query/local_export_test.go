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

// ProcessCPUForTest is the processor time the process has used, in
// nanoseconds (benchmarks report it per operation: on a busy machine
// wall time says little).
func ProcessCPUForTest() int64 { return processCPU() }
