package disk

import "os"

// FileID tells files apart by device and inode, size and modification
// time: two opens of one file, or of two hard links to it (as generations
// share the files an incremental build leaves unchanged), have one FileID
// while the file is not written in place, and gds writes a generation's
// files once. While a mapping or a descriptor of the file is held its
// inode is not reused, so a FileID kept no longer than one names one
// content.
type FileID struct {
	dev, ino    uint64
	size, mtime int64
}

// openID opens the file name for reading and tells its FileID (ok false
// where the system has none).
func openID(name string) (f *os.File, st os.FileInfo, id FileID, ok bool, err error) {
	if f, err = os.Open(name); err != nil {
		return nil, nil, id, false, err
	}
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, id, false, err
	}
	id, ok = idOf(st)
	return f, st, id, ok, nil
}
