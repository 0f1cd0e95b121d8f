package main

import (
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/api/admin"
)

// TestVersionMatchesBuildInfo: `gds version --json` of the real binary
// says what the binary's build information (what `go version -m` reads)
// says: Go version, platform, module version or "devel", revision, its
// time and the modified flag; the text form and `gds --version` say the
// same.
func TestVersionMatchesBuildInfo(t *testing.T) {
	needsBinary(t)
	bin := buildBinary(t)
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got admin.Build
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	setting := func(k string) string {
		for _, s := range bi.Settings {
			if s.Key == k {
				return s.Value
			}
		}
		return ""
	}
	want := bi.Main.Version
	if want == "" || want == "(devel)" {
		want = "devel"
	}
	var wantTime string
	if got.RevisionTime != nil {
		wantTime = got.RevisionTime.Format(time.RFC3339)
	}
	switch {
	case got.Version != want:
		t.Errorf("version %q, build info says %q", got.Version, want)
	case got.GoVersion != bi.GoVersion:
		t.Errorf("go version %q, build info says %q", got.GoVersion, bi.GoVersion)
	case got.Platform != setting("GOOS")+"/"+setting("GOARCH"):
		t.Errorf("platform %q, build info says %s/%s", got.Platform, setting("GOOS"), setting("GOARCH"))
	case got.Revision != setting("vcs.revision") || wantTime != setting("vcs.time"):
		t.Errorf("revision %q at %q, build info says %q at %q", got.Revision, wantTime, setting("vcs.revision"), setting("vcs.time"))
	case got.Dirty != (setting("vcs.modified") == "true"):
		t.Errorf("dirty %v, build info says vcs.modified=%q", got.Dirty, setting("vcs.modified"))
	case len(got.Formats) == 0:
		t.Errorf("no formats: %s", out)
	}

	text, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"gds, version " + got.Version, "go version:", got.GoVersion, "platform:", got.Platform}
	for _, f := range got.Formats {
		lines = append(lines, f.Name+" ", f.Writes+" ", strings.Join(f.Reads, " "))
	}
	for _, l := range lines {
		if !strings.Contains(string(text), l) {
			t.Errorf("gds version lacks %q:\n%s", l, text)
		}
	}
	if alias, err := exec.Command(bin, "--version").Output(); err != nil || string(alias) != string(text) {
		t.Errorf("gds --version = %v\n%s\nwant gds version's\n%s", err, alias, text)
	}
}

// TestVersionFormatsAreWhatABuildWrites: the formats gds version says it
// writes are those of the files a build writes (the magic of each name
// table, record store index, value-column and affiliation-column file, the versions in
// generation.json, the snapshot manifest's format); each written version
// is among those read.
func TestVersionFormatsAreWhatABuildWrites(t *testing.T) {
	snap := opsSnapshot(t)
	data := filepath.Join(t.TempDir(), "data")
	if _, stderr, err := runCmd(t, "index", "--snapshot", snap, "--data", data); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	out, _, err := runCmd(t, "version", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var b admin.Build
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	writes := map[string]string{}
	for _, f := range b.Formats {
		writes[f.Name] = f.Writes
		if !slices.Contains(f.Reads, f.Writes) {
			t.Errorf("%s: writes %s but reads only %v", f.Name, f.Writes, f.Reads)
		}
	}
	gens, _ := filepath.Glob(filepath.Join(data, "generations", "*"))
	if len(gens) != 1 {
		t.Fatalf("generations: %v", gens)
	}
	magics := map[string]string{"name table": "*/*.tbl", "record store": "records/*.idx", "value columns": "*/*.cols",
		"affiliation columns": "records/*.aff"}
	for name, pattern := range magics {
		files, _ := filepath.Glob(filepath.Join(gens[0], pattern))
		if len(files) == 0 {
			t.Errorf("%s: no %s in the generation", name, pattern)
		}
		for _, f := range files {
			head := make([]byte, 8)
			fd, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			fd.Read(head)
			fd.Close()
			if string(head) != writes[name] {
				t.Errorf("%s: %s begins %q, gds version says %s writes %q", name, f, head, name, writes[name])
			}
		}
	}
	var meta struct{ Fold, Fields int }
	var manifest struct{ Format int }
	readJSON(t, filepath.Join(gens[0], "generation.json"), &meta)
	readJSON(t, filepath.Join(snap, "manifest.json"), &manifest)
	for name, v := range map[string]int{"name folding": meta.Fold, "analysts' fields": meta.Fields, "snapshot": manifest.Format} {
		if got := writes[name]; got != strconv.Itoa(v) {
			t.Errorf("%s: the files hold %d, gds version says it writes %q", name, v, got)
		}
	}

	// The version set at link time wins over what Go stamped.
	defer func(v string) { version = v }(version)
	version = "v9.8.7"
	out, _, _ = runCmd(t, "version", "--json")
	if err := json.Unmarshal([]byte(out), &b); err != nil || b.Version != "v9.8.7" {
		t.Errorf("with main.version set: %v %s", err, out)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
