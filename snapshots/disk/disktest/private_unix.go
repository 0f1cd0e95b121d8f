//go:build unix

package disktest

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// ZeroUmask sets the process's umask to 0 until t ends, so that only a
// file's own mode keeps it private.
func ZeroUmask(t testing.TB) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
}

// AssertPrivate fails t unless dir and every directory under it are 0700
// and every file under it 0600; it returns the files' paths relative to
// dir.
func AssertPrivate(t testing.TB, dir string) (files []string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files = append(files, rel)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s is %#o, want %#o", filepath.Join(filepath.Base(dir), rel), got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
