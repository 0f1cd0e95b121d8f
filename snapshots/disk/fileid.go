package disk

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
