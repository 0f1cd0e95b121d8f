package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestArchiveReproducible: the same files give the same archive bytes
// whatever their modification times, permissions beyond the execute bit
// and order on disk; entries are sorted, dated mtime, owned by root,
// their directories listed.
func TestArchiveReproducible(t *testing.T) {
	mtime := time.Unix(1795786841, 0)
	write := func(dir string, skew time.Duration, perm os.FileMode) []byte {
		t.Helper()
		for _, f := range []struct {
			name string
			data string
			mode os.FileMode
		}{{"b/z.md", "z", 0o600}, {"a.md", "a", 0o640}, {"b/run", "#!/bin/sh\n", 0o700}} {
			p := filepath.Join(dir, f.name)
			os.MkdirAll(filepath.Dir(p), 0o700)
			if err := os.WriteFile(p, []byte(f.data), f.mode|perm); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, time.Now().Add(skew), time.Now().Add(skew)); err != nil {
				t.Fatal(err)
			}
		}
		es, err := dirEntries(dir, "gds-v1.linux-amd64/docs", true)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, entry{name: "gds-v1.linux-amd64/NOTES.md", data: []byte("notes")})
		out := filepath.Join(t.TempDir(), "a.tar.gz")
		if err := writeArchive(out, es, mtime, true); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := write(t.TempDir(), 0, 0)
	second := write(t.TempDir(), -48*time.Hour, 0o044)
	if !bytes.Equal(first, second) {
		t.Fatal("the same files at other times and modes gave another archive")
	}

	zr, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header has time %v, name %q", zr.ModTime, zr.Name)
	}
	var names []string
	eachTarEntry(t, zr, func(h *tar.Header, _ *tar.Reader) {
		names = append(names, h.Name)
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir || h.Name == "gds-v1.linux-amd64/docs/b/run" {
			wantMode = 0o755
		}
		if !h.ModTime.Equal(mtime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.Mode != wantMode {
			t.Errorf("%s: mtime %v uid %d gid %d %q %q mode %o, want %v, root, mode %o", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname, h.Mode, mtime, wantMode)
		}
	})
	want := []string{"gds-v1.linux-amd64/", "gds-v1.linux-amd64/NOTES.md", "gds-v1.linux-amd64/docs/",
		"gds-v1.linux-amd64/docs/a.md", "gds-v1.linux-amd64/docs/b/", "gds-v1.linux-amd64/docs/b/run", "gds-v1.linux-amd64/docs/b/z.md"}
	if len(names) != len(want) {
		t.Fatalf("entries %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("entry %d is %q, want %q (sorted, directories listed)", i, names[i], want[i])
		}
	}
}
