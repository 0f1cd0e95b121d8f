//go:build unix

package auth

import (
	"path/filepath"
	"slices"
	"testing"

	"gds/snapshots/disk/disktest"
)

// The local signing key's directory is created 0700 and both its files
// are 0600, even under umask 0.
func TestLocalKeyIsPrivate(t *testing.T) {
	disktest.ZeroUmask(t)
	data := filepath.Join(t.TempDir(), "data")
	if _, err := EnsureLocalKey(data); err != nil {
		t.Fatal(err)
	}
	files := disktest.AssertPrivate(t, data)
	for _, name := range []string{LocalKeyFile, LocalJWKSFile} {
		if !slices.Contains(files, name) {
			t.Errorf("%s not written: %s holds %q", name, data, files)
		}
	}
}
