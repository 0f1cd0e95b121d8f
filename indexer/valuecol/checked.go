package valuecol

import (
	"sync"

	"gds/snapshots/disk"
)

// checked counts, for each value-column file checked whole by Open, the
// Files open on it. A key stays only while one is: a mapping holds the
// file's inode, so no other file takes its FileID meanwhile.
var checked checkedFiles

// checkedKey is a file and the number of ordinals it was checked for.
type checkedKey struct {
	id disk.FileID
	n  int
}

type checkedFiles struct {
	mu   sync.Mutex
	open map[checkedKey]int
}

func (c *checkedFiles) has(k checkedKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[k] > 0
}

func (c *checkedFiles) add(k checkedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[checkedKey]int{}
	}
	c.open[k]++
}

func (c *checkedFiles) drop(k checkedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[k]--; c.open[k] <= 0 {
		delete(c.open, k)
	}
}
