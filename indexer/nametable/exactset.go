package nametable

import (
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Exact sets: where one stored list holds exactly the names that contain
// a text, or that start with it, the set of their ordinals is that list,
// decoded whole, container by container, with no name read: a pattern
// matching millions of names (name:*ari*) costs a copy of its list rather
// than a walk verifying each of them.

// ContainsSet returns the ordinals whose folded name contains text, or
// false when no one list holds exactly them. One does for a text of three
// bytes (its trigram's list) and for one of four in a table with
// four-byte gram lists (GDSTBL05) that keeps the text's (see quadShare);
// a longer text, or four bytes whose list is left out, needs a walk
// (Contains) that verifies its candidates. Hidden ordinals are in the set:
// the caller removes them. The bitmap is the caller's to change.
func (t *Table) ContainsSet(text []byte) (*roaring.Bitmap, bool) {
	switch {
	case len(text) == 3:
		return decodeSet(t.grams.bytes(gram3(text)))
	case len(text) == 4 && t.hasQuad:
		b := t.quads.bytes(gram4(text))
		if b != nil && len(b) == 0 {
			return nil, false // left out: its two trigrams' lists stand in
		}
		return decodeSet(b)
	}
	return nil, false
}

// PrefixSet returns the ordinals whose folded name starts with text, or
// false when no one list holds exactly them: one does for a text of three
// bytes (its first-trigram list) and for one of four in a table with
// first-four-byte lists (GDSTBL05). As ContainsSet, hidden ordinals are in
// it, and the bitmap is the caller's.
func (t *Table) PrefixSet(text []byte) (*roaring.Bitmap, bool) {
	switch {
	case len(text) == 3:
		return decodeSet(t.prefix.bytes(gram3(text)))
	case len(text) == 4 && t.hasQuad:
		return decodeSet(t.prefix4.bytes(gram4(text)))
	}
	return nil, false
}

// decodeSet decodes a stored list (nil: no name has its gram, an empty
// set) into a bitmap of its own: roaring reads the containers in place,
// then each is copied out of the mapped file, so that the bitmap may be
// changed and outlive the table. It reports false for a list it cannot
// read (Open checked every list, so none).
func decodeSet(b []byte) (*roaring.Bitmap, bool) {
	bm := roaring.New()
	if b == nil {
		return bm, true
	}
	if _, err := bm.FromBuffer(b); err != nil {
		return nil, false
	}
	bm.CloneCopyOnWriteContainers()
	return bm, true
}

// LineBreaks returns the ordinals of the names of three bytes or more
// that hold a newline, which a regular expression's dot does not match,
// so that a pattern's matches (name:*ari*) leave them out where the exact
// sets hold them. They are the union of the lists of the trigrams holding
// a newline (none, in EVE's names), found once by a pass over the
// trigrams. The bitmap is shared: the caller must not change it.
func (t *Table) LineBreaks() *roaring.Bitmap {
	t.breaks.once.Do(func() {
		bm := roaring.New()
		for i, k := range t.grams.keys {
			if byte(k>>16) != '\n' && byte(k>>8) != '\n' && byte(k) != '\n' {
				continue
			}
			off, n := t.grams.offs[2*i], t.grams.offs[2*i+1]
			if l, ok := decodeSet(t.grams.blob[off : off+n]); ok {
				bm.Or(l)
			}
		}
		t.breaks.set = bm
	})
	return t.breaks.set
}

// lineBreaks holds LineBreaks' set once it is found.
type lineBreaks struct {
	once sync.Once
	set  *roaring.Bitmap
}
