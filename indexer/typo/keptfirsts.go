package typo

import (
	"sync"

	"gds/snapshots/disk"
)

// The lists of firsts depend only on an index's file and its table's, and
// a generation and the next share both by hard links where an incremental
// build left a category's base unchanged. So the indexes open on one pair
// of files share one copy of the lists: the next generation's open takes
// them instead of walking the index again (at 50M names, about 1.4 s of
// CPU at every incremental build's switch), and they are freed with the
// last index holding them. An index holds its file mapped and its table
// open (same), so neither FileID names another file meanwhile.
var keptFirsts firstsCopies

// firstsKey is an index's file and its table's.
type firstsKey struct{ index, table disk.FileID }

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

type firstsCopies struct {
	mu sync.Mutex
	m  map[firstsKey]*firstsCopy
}

// firstsCopy is one pair's lists and the indexes holding them.
type firstsCopy struct {
	offs, posts []uint32
	free        func() error
	refs        int
}

// take returns the lists of key, if an index holds them, and the function
// that lets go of this hold.
func (c *firstsCopies) take(key firstsKey) (offs, posts []uint32, release func() error, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fc := c.m[key]
	if fc == nil {
		return nil, nil, nil, false
	}
	fc.refs++
	return fc.offs, fc.posts, c.releaser(key, fc), true
}

// put keeps the lists just made for key, which free lets go of, and
// returns the lists to use and the function that lets go of them: the
// ones another index made meanwhile, if it did (these are freed then).
func (c *firstsCopies) put(key firstsKey, offs, posts []uint32, free func() error) ([]uint32, []uint32, func() error) {
	c.mu.Lock()
	fc := c.m[key]
	if fc != nil {
		fc.refs++
		c.mu.Unlock()
		_ = free()
		return fc.offs, fc.posts, c.releaser(key, fc)
	}
	if c.m == nil {
		c.m = map[firstsKey]*firstsCopy{}
	}
	fc = &firstsCopy{offs: offs, posts: posts, free: free, refs: 1}
	c.m[key] = fc
	c.mu.Unlock()
	return offs, posts, c.releaser(key, fc)
}

// releaser returns the function that drops one hold of fc, freeing its
// lists with the last; a second call does nothing.
func (c *firstsCopies) releaser(key firstsKey, fc *firstsCopy) func() error {
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			c.mu.Lock()
			fc.refs--
			last := fc.refs == 0
			if last && c.m[key] == fc {
				delete(c.m, key)
			}
			c.mu.Unlock()
			if last {
				err = fc.free()
			}
		})
		return err
	}
}
