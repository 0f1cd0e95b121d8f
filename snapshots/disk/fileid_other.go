//go:build !unix

package disk

import "os"

// idOf tells no FileID where the system has no inodes: nothing that
// keys on one is shared there.
func idOf(os.FileInfo) (FileID, bool) { return FileID{}, false }
