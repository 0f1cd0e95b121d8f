package fleet_test

import (
	"encoding/json"
	"strings"
	"testing"

	"gds/indexer/fleet"
)

const sum = "0be708d9cf6467b13972b9a34969970669a21744f4f1452a9aa2c66f63870f9e"

// TestParseManifestRefuses: a manifest naming paths outside the generation
// directory, duplicates or bad digests is refused before anything is
// written.
func TestParseManifestRefuses(t *testing.T) {
	for _, path := range []string{"../x", "/etc/passwd", "a/../../b", "a//b", "", ".", "a\\b", "./a"} {
		raw, _ := json.Marshal(fleet.Manifest{Format: 1, Generation: 3, Files: []fleet.File{{Path: path, SHA256: sum}}})
		if _, err := fleet.ParseManifest(raw, 3); err == nil {
			t.Errorf("manifest with path %q accepted", path)
		}
	}
	for name, m := range map[string]fleet.Manifest{
		"twice":      {Format: 1, Generation: 3, Files: []fleet.File{{Path: "a", SHA256: sum}, {Path: "a", SHA256: sum}}},
		"bad sha":    {Format: 1, Generation: 3, Files: []fleet.File{{Path: "a", SHA256: "xyz"}}},
		"negative":   {Format: 1, Generation: 3, Files: []fleet.File{{Path: "a", SHA256: sum, Size: -1}}},
		"other gen":  {Format: 1, Generation: 4},
		"new format": {Format: 2, Generation: 3},
	} {
		raw, _ := json.Marshal(m)
		if _, err := fleet.ParseManifest(raw, 3); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	good, _ := json.Marshal(fleet.Manifest{Format: 1, Generation: 3, Files: []fleet.File{{Path: "character/bleve-0/store/root.bolt", SHA256: sum, Size: 9}}})
	if m, err := fleet.ParseManifest(good, 3); err != nil || m.Bytes() != 9 {
		t.Fatalf("good manifest: %v %v", m, err)
	}
}

func TestParsePointer(t *testing.T) {
	good := `{"format":1,"generation":12,"manifest":"generations/000012.json","manifest_sha256":"` + sum + `","published":"2026-11-24T14:51:10Z"}`
	if p, err := fleet.ParsePointer([]byte(good)); err != nil || p.Generation != 12 {
		t.Fatalf("good pointer: %+v %v", p, err)
	}
	for _, bad := range []string{
		strings.Replace(good, "000012", "000011", 1),
		strings.Replace(good, `"generation":12`, `"generation":0`, 1),
		strings.Replace(good, sum, "abc", 1),
		strings.Replace(good, `"format":1`, `"format":2`, 1),
		strings.Replace(good, "}", `,"extra":1}`, 1),
		`{"format":1`, ``, `null`,
	} {
		if _, err := fleet.ParsePointer([]byte(bad)); err == nil {
			t.Errorf("pointer %s accepted", bad)
		}
	}
}

func TestURLs(t *testing.T) {
	for s, want := range map[string]bool{"s3://b?region=x": true, "file:///srv/b": true, "gs://b": true,
		"/srv/snapshot": false, "snapshots/sample": false, "c:/x": false} {
		if fleet.IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
	r := fleet.Redact("s3://key:secret@b?region=eu-west-1&endpoint=http%3A%2F%2Fminio%3A9000&sas_token=SECRET")
	if strings.Contains(r, "secret") || strings.Contains(r, "SECRET") || !strings.Contains(r, "eu-west-1") || !strings.Contains(r, "minio") {
		t.Fatalf("Redact = %s", r)
	}
}

// FuzzParsePointer and FuzzParseManifest: whatever a bucket holds, the
// parsers refuse it or return what a replica may safely act on.
func FuzzParsePointer(f *testing.F) {
	f.Add([]byte(`{"format":1,"generation":12,"manifest":"generations/000012.json","manifest_sha256":"` + sum + `","published":"2026-11-24T14:51:10Z"}`))
	f.Add([]byte(`{"format":1,"generation":18446744073709551615,"manifest":"generations/18446744073709551615.json","manifest_sha256":"` + sum + `"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := fleet.ParsePointer(raw)
		if err == nil && (p.Generation == 0 || !strings.HasPrefix(p.Manifest, "generations/") || len(p.SHA256) != 64) {
			t.Fatalf("accepted %+v", p)
		}
	})
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"generation":3,"created":"2026-11-24T14:51:10Z","files":[{"path":"generation.json","size":10,"sha256":"`+sum+`"}]}`), uint64(3))
	f.Add([]byte(`{"format":1,"generation":3,"files":[{"path":"../x","size":10,"sha256":"`+sum+`"}]}`), uint64(3))
	f.Fuzz(func(t *testing.T, raw []byte, gen uint64) {
		m, err := fleet.ParseManifest(raw, gen)
		if err != nil {
			return
		}
		for _, fl := range m.Files {
			if strings.HasPrefix(fl.Path, "/") || strings.Contains(fl.Path, "..") && strings.Contains("/"+fl.Path+"/", "/../") || fl.Size < 0 {
				t.Fatalf("accepted %+v", fl)
			}
		}
	})
}
