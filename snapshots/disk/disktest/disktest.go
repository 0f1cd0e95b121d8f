// Package disktest holds checks of what tests leave on disk, and the
// edits tests make to files as another program would have written them.
package disktest

import (
	"encoding/json"
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

// EditJSON rewrites the JSON object in the file at path with edit applied
// to its fields, as another program (or an older version) would have
// written it.
func EditJSON(t testing.TB, path string, edit func(fields map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	edit(fields)
	if raw, err = json.Marshal(fields); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}
