package typo

import "gds/snapshots/disk"

// The lists of firsts depend only on an index's file and its table's, and
// a generation and the next share both by hard links where an incremental
// build left a category's base unchanged. So the indexes open on one pair
// of files share one copy of the lists (disk.Shared): the next
// generation's open takes them instead of walking the index again (at 50M
// names, about 1.4 s of CPU at every incremental build's switch), and
// they are freed with the last index holding them. An index holds its
// file mapped and its table open (same), so neither FileID names another
// file meanwhile.
var keptFirsts disk.Shared[firstsKey, firstsLists]

// firstsKey is an index's file and its table's.
type firstsKey struct{ index, table disk.FileID }

// firstsLists are the lists of firsts: where each word's start, and the
// ordinals.
type firstsLists struct{ offs, posts []uint32 }

// firstsKey returns the key of x's lists over table t; false where either
// was not opened from a file with a FileID.
func (x *Index) firstsKey(t Namesakes) (firstsKey, bool) {
	ft, ok := t.(interface{ FileID() (disk.FileID, bool) })
	if !ok || x.loaded == nil {
		return firstsKey{}, false
	}
	index, ok1 := x.loaded.ID()
	table, ok2 := ft.FileID()
	return firstsKey{index, table}, ok1 && ok2
}
