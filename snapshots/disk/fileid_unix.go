//go:build unix

package disk

import (
	"os"
	"syscall"
)

// idOf is the FileID of the file fi describes; false where the system
// tells no inode.
func idOf(fi os.FileInfo) (FileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, false
	}
	return FileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}
