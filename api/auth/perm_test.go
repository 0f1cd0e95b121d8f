//go:build unix

package auth

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The local signing key's directory is created 0700 and both its files
// are 0600, even under umask 0.
func TestLocalKeyIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	data := filepath.Join(t.TempDir(), "data")
	if _, err := EnsureLocalKey(data); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{
		data: 0o700, filepath.Join(data, LocalKeyFile): 0o600, filepath.Join(data, LocalJWKSFile): 0o600,
	} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s is %#o, want %#o", name, got, want)
		}
	}
}
