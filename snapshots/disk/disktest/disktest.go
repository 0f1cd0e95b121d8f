// Package disktest holds checks of what tests leave on disk.
package disktest

import (
	"os"
	"strings"
	"testing"
)

// AssertOnly fails t when dir holds entries other than names, in that
// order (temporary files and directories and ".old" leftovers included).
func AssertOnly(t testing.TB, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}
