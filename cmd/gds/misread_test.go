package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/indexer/nametable"
	"gds/snapshots/disk/disktest"
)

// A generation whose names another gds version folded (say, before an
// upgrade) still serves after a restart, as the best there is, while a
// full build from the snapshot replaces it; the log says why.
func TestServeRebuildsGenerationFoldedOtherwise(t *testing.T) {
	needsBinary(t)
	data := t.TempDir()
	if out, err := runGDSBin(t, "index", "--snapshot", sampleSnapshot, "--data", data); err != nil {
		t.Fatalf("first build: %v\n%s", err, out)
	}
	old := readCurrent(t, data)
	disktest.EditJSON(t, generationMetaPath(t, data, old), func(meta map[string]any) { meta["fold"] = 1 })

	s := serveBinary(t, data, "--snapshot", sampleSnapshot)
	defer s.stop(t)
	if !strings.Contains(s.out.String(), "folded by version 1, this gds folds by") {
		t.Fatalf("the log does not say why the live generation is rebuilt:\n%s", s.out)
	}
	rebuilt := poll(90*time.Second, func() bool {
		st := s.status(t)
		if st.LastBuild != nil && st.LastBuild.Error != "" {
			t.Fatalf("the rebuild failed: %s", st.LastBuild.Error)
		}
		return st.Live != nil && st.Building == nil && readCurrent(t, data) != old
	})
	if !rebuilt {
		t.Fatalf("generation %s still live 90 s after the start", old)
	}
	meta := readGenerationMeta(t, data, readCurrent(t, data))
	if fold, _ := meta["fold"].(float64); int(fold) != nametable.FoldVersion {
		t.Fatalf("the new generation is folded by version %v, want %d", meta["fold"], nametable.FoldVersion)
	}
	if got := s.search(t, "Jita", "solar_system")["solar_system"]; len(got) == 0 {
		t.Fatal("the rebuilt generation does not find Jita")
	}
}

// readGenerationMeta reads the generation.json of generation id (as
// CURRENT names it) in data.
func readGenerationMeta(t *testing.T, data, id string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(generationMetaPath(t, data, id))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	return meta
}

func generationMetaPath(t *testing.T, data, id string) string {
	t.Helper()
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		t.Fatalf("generation %q: %v", id, err)
	}
	return filepath.Join(data, "generations", fmt.Sprintf("%06d", n), "generation.json")
}
