package snapshots

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeRaw writes lines as kind k's plain file of a snapshot at dir with a
// correct manifest, bypassing the Writer's checks.
func writeRaw(t *testing.T, dir string, k Kind, lines []string) *Snapshot {
	t.Helper()
	body := strings.Join(lines, "\n") + "\n"
	path := string(k) + ".jsonl"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, path), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	m := Manifest{Format: FormatVersion, Created: created, Files: map[Kind]FileInfo{k: {Path: path, SHA256: hex.EncodeToString(sum[:]), Records: int64(len(lines))}}}
	raw, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEachWithSkipsKnownLines(t *testing.T) {
	lines := []string{
		`{"id":1,"name":"One"}`,
		`{"id":2,"name":"Two"}`,
		`{"name":"Three","id":3}`, // key not first: always decoded
		`{"id":4,"name":"Four"}`,
	}
	s := writeRaw(t, t.TempDir(), Factions, lines)
	var asked []int64
	var decoded, skipped []int64
	err := s.EachWith(Factions, EachOptions{Skip: func(key int64, raw []byte) bool {
		asked = append(asked, key)
		if string(raw) != lines[len(asked)-1] && key != 4 {
			t.Errorf("Skip got %q for key %d", raw, key)
		}
		return key%2 == 0 || key == 3
	}}, func(rec Record, line Line) error {
		if rec == nil {
			skipped = append(skipped, line.Key)
		} else {
			if rec.Key() != line.Key {
				t.Errorf("record %d on line with key %d", rec.Key(), line.Key)
			}
			decoded = append(decoded, line.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := join(asked); got != "1,2,4" {
		t.Errorf("Skip asked about %s, want 1,2,4 (line 3 does not start with its key)", got)
	}
	if join(decoded) != "1,3" || join(skipped) != "2,4" {
		t.Errorf("decoded %s, skipped %s; want 1,3 and 2,4", join(decoded), join(skipped))
	}
}

// Lines that are skipped still count for order, count and digest.
func TestEachWithChecksSkippedLines(t *testing.T) {
	skipAll := EachOptions{Skip: func(int64, []byte) bool { return true }}
	none := func(Record, Line) error { return nil }

	s := writeRaw(t, t.TempDir(), Factions, []string{`{"id":2,"name":"Two"}`, `{"id":1,"name":"One"}`})
	if err := s.EachWith(Factions, skipAll, none); err == nil || !strings.Contains(err.Error(), "line 2: id 1 is out of order") {
		t.Errorf("out of order skipped lines: %v", err)
	}
	dir := t.TempDir()
	s = writeRaw(t, dir, Factions, []string{`{"id":1,"name":"One"}`, `{"id":2,"name":"Two"}`})
	if err := os.WriteFile(filepath.Join(dir, "factions.jsonl"), []byte(`{"id":1,"name":"One"}`+"\n"+`{"id":2,"name":"Tw0"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.EachWith(Factions, skipAll, none); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("changed skipped line: %v, want a checksum mismatch", err)
	}
}

func TestQuickKey(t *testing.T) {
	for _, c := range []struct {
		line string
		key  int64
		ok   bool
	}{
		{`{"id":30000142,"name":"Jita"}`, 30000142, true},
		{`{"id":7}`, 7, true},
		{`{"id":0,"x":1}`, 0, true},
		{`{"id":07,"x":1}`, 0, false},
		{`{"id": 7,"x":1}`, 0, false},
		{`{"id":-7,"x":1}`, 0, false},
		{`{"id":7.5,"x":1}`, 0, false},
		{`{"id":7`, 0, false},
		{`{"id":1234567890123456789,"x":1}`, 0, false}, // 19 digits: decoded in full
		{`{"name":"x","id":7}`, 0, false},
		{`{"idx":7}`, 0, false},
	} {
		key, ok := QuickKey([]byte(c.line), `{"id":`)
		if key != c.key || ok != c.ok {
			t.Errorf("QuickKey(%s) = %d, %v; want %d, %v", c.line, key, ok, c.key, c.ok)
		}
	}
}

func join(keys []int64) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = itoa(k)
	}
	return strings.Join(s, ",")
}

func itoa(k int64) string { return strconv.FormatInt(k, 10) }

// A read that stops early (a bad record, or the consumer's own error)
// stops the goroutine hashing the file.
func TestEarlyStopLeavesNoGoroutine(t *testing.T) {
	lines := make([]string, 20000)
	for i := range lines {
		lines[i] = `{"id":` + itoa(int64(i+1)) + `,"name":"Faction with a long enough name to fill the buffers"}`
	}
	s := writeRaw(t, t.TempDir(), Factions, lines)
	before := runtime.NumGoroutine()
	for range 20 {
		stop := errors.New("enough")
		err := s.Each(Factions, func(rec Record, line Line) error {
			if line.Number == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) {
			t.Fatalf("Each = %v, want the consumer's error", err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after 20 stopped reads, %d before", n, before)
	}
}

func TestCorruptZstdNamesTheFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	writeSampleWith(t, dir, CreateOptions{Zstd: true})
	path := filepath.Join(dir, "types.jsonl.zst")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(raw) / 2; i < len(raw); i++ {
		raw[i] ^= 0x5a
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "types.jsonl.zst") {
		t.Fatalf("Open = %v, want an error naming types.jsonl.zst", err)
	}
}
