package disk

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gds/snapshots/disk/disktest"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.json")
	for _, content := range []string{"one", "two"} {
		if err := WriteFileAtomic(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil || string(got) != content {
			t.Errorf("read %q, %v; want %q", got, err, content)
		}
	}
	disktest.AssertOnly(t, dir, "f.json")
}

// A fresh file replaces a hard-linked one without touching the other link.
func TestCreateFreshKeepsLinks(t *testing.T) {
	dir := t.TempDir()
	old, cur := filepath.Join(dir, "old"), filepath.Join(dir, "cur")
	if err := WriteFileSync(old, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := LinkOrCopy(old, cur, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileSync(cur, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{old: "kept", cur: "new"} {
		if got, err := os.ReadFile(name); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(src, []byte("payload"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CopyFile(src, dst, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(dst); err != nil || string(got) != "payload" {
		t.Errorf("copy = %q, %v", got, err)
	}
}

func TestMap(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "m")
	if err := os.WriteFile(name, []byte("mapped bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, populate := range []bool{false, true} {
		b, err := Map(name, populate)
		if err != nil || string(b) != "mapped bytes" {
			t.Fatalf("Map(%v) = %q, %v", populate, b, err)
		}
		if err := Unmap(b); err != nil {
			t.Fatal(err)
		}
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Map(empty, false); err != nil || b != nil {
		t.Errorf("empty file maps to %q, %v; want nil", b, err)
	}
	if _, err := Map(filepath.Join(dir, "missing"), false); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, ok, err := TryLock(path, 0o600)
	if err != nil || !ok {
		t.Fatalf("first TryLock = %v, %v", ok, err)
	}
	// flock locks belong to the open file, so a second open is refused
	// just as another process would be.
	if _, ok, err := TryLock(path, 0o600); err != nil || ok {
		t.Fatalf("second TryLock while held = %v, %v; want refused", ok, err)
	}
	l.Unlock()
	l2, ok, err := TryLock(path, 0o600)
	if err != nil || !ok {
		t.Fatalf("TryLock after Unlock = %v, %v", ok, err)
	}
	l2.Unlock()
}

// A mapping whose pages ReleasePages let go of (bounds past either end
// too) reads the file's bytes again, and LoadLazily maps a file as
// LoadMapped does.
func TestReleasePagesKeepsContent(t *testing.T) {
	page := os.Getpagesize()
	want := make([]byte, 5*page+100)
	for i := range want {
		want[i] = byte(i * 7)
	}
	name := filepath.Join(t.TempDir(), "pages")
	if err := os.WriteFile(name, want, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := LoadLazily(name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b := l.Bytes
	for _, r := range [][2]int{{1, 3*page + 5}, {2 * page, 2*page + 10}, {4 * page, 10 * page}, {0, len(b)}} {
		ReleasePages(b, r[0], r[1]) // after the last check read every page
		if !bytes.Equal(b, want) {
			t.Fatalf("after ReleasePages(%d, %d) the mapping reads other bytes", r[0], r[1])
		}
	}
}
