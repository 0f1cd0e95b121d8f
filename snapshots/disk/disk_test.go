package disk

import (
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
