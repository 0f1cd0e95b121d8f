// Package disk holds the file helpers every writer of gds's data uses:
// atomic and synced writes, hard links with a copy fallback, read-only
// memory maps and the cross-process build lock. The Unix-only calls (mmap,
// flock) live behind build tags; elsewhere they degrade as each says.
package disk

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to a temporary file beside name, syncs it and
// renames it over name, so readers see the old content or the new, never a
// part.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) error {
	err := ReplaceFile(name, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return SyncDir(filepath.Dir(name))
}

// ReplaceFile has write fill a temporary file beside name, then gives it
// perm, syncs it and renames it over name; on any failure the temporary
// file is removed and name is left as it was. The directory is not synced
// (WriteFileAtomic does that): a build syncs its directory once.
func ReplaceFile(name string, perm os.FileMode, write func(f *os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// SyncDir flushes a directory's entries (a rename or a new file in it) to
// disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// CreateFresh creates name for writing, removing what was there first: a
// file that may be hard-linked into an older generation must never be
// truncated in place.
func CreateFresh(name string, perm os.FileMode) (*os.File, error) {
	if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
}

// UnlinkedTemp creates a temporary file in dir (os.CreateTemp's pattern)
// and unlinks it: it goes when closed, however the process ends.
func UnlinkedTemp(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// WriteFileSync writes data to a fresh file (see CreateFresh) and syncs it.
func WriteFileSync(name string, data []byte, perm os.FileMode) error {
	f, err := CreateFresh(name, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return SyncClose(f, nil)
}

// SyncClose flushes w (a buffered writer in front of f, or nil), syncs f
// and closes it, which makes what was written durable; f is closed
// whatever fails.
func SyncClose(f *os.File, w interface{ Flush() error }) error {
	if w != nil {
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// LinkOrCopy hard-links src to dst, copying where links are not possible
// (another file system).
func LinkOrCopy(src, dst string, perm os.FileMode) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return CopyFile(src, dst, perm)
}

// CopyFile copies src to a new file dst and syncs it.
func CopyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	// In whole huge-page-sized writes, as the files were written (see
	// HugeChunk): most copied files are mapped and read at random.
	w := NewChunkWriter(out, HugeChunk)
	if _, err := io.Copy(w, in); err != nil {
		out.Close()
		return err
	}
	return SyncClose(out, w)
}

// Permissions of everything gds keeps in a data directory: access lists,
// roles and corporation documents are for the service's user alone.
const (
	PrivateDir  os.FileMode = 0o700
	PrivateFile os.FileMode = 0o600
)

// MakePrivate sets every directory under root (root too) to PrivateDir
// and every file to PrivateFile, whatever the umask or a library chose
// when creating them.
func MakePrivate(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Chmod(path, PrivateDir)
		case d.Type().IsRegular():
			return os.Chmod(path, PrivateFile)
		}
		return nil
	})
}
