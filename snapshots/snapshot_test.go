package snapshots

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"gds/snapshots/disk/disktest"
)

func ptr[T any](v T) *T { return &v }

var created = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// sample holds one or more valid records of every kind, in key order.
func sample() map[Kind][]Record {
	apply := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	return map[Kind][]Record{
		Agents: {&Agent{Entity: Entity{ID: 3008416, Name: "Antaken Kamola"}, CorporationID: 1000002, LocationID: 60000004, AgentTypeID: 2, DivisionID: 22, Level: 1}},
		Alliances: {&Alliance{Entity: Entity{ID: 99000001, Name: "Test Alliance Please Ignore"}, Ticker: "TEST", ExecutorCorporationID: 98000001,
			DateFounded: ptr(time.Date(2010, 5, 1, 0, 0, 0, 0, time.UTC))}},
		Characters: {
			&Character{Entity: Entity{ID: 90000001, Name: "Alpha Pilot"}, CorporationID: 98000001, Gender: "female", SecurityStatus: ptr(-1.5),
				Birthday: ptr(time.Date(2015, 3, 24, 11, 37, 0, 0, time.UTC))},
			&Character{Entity: Entity{ID: 90000002, Name: "Beta Pilot"}, CorporationID: 98000001},
		},
		Constellations: {&Constellation{Entity: Entity{ID: 20000020, Name: "Kimotoro"}, RegionID: 10000002, Systems: []int64{30000142, 30000144}}},
		Corporations: {&Corporation{Entity: Entity{ID: 1000035, Name: "Caldari Navy", Names: Localized{"en": "Caldari Navy", "ja": "カルダリ海軍"}},
			Ticker: "CN", TaxRate: 0.1, NPC: true, WarEligible: ptr(false), Descriptions: Localized{"de": "Die Marine"}}},
		Factions: {&Faction{Entity: Entity{ID: 500001, Name: "Caldari State"}, Description: "…", FactionDetails: FactionDetails{CorporationID: 1000035, SizeFactor: 5, StationCount: 1527, IsUnique: true}}},
		Types: {
			&Type{Entity: Entity{ID: 34, Name: "Tritanium", Names: Localized{"en": "Tritanium", "zh": "三钛合金"}}, GroupID: 18, Published: true, TypeDetails: TypeDetails{Volume: ptr(0.01), PortionSize: ptr(int64(1))}},
			// Tritanium has no category_id (optional), the Rifter has one.
			&Type{Entity: Entity{ID: 587, Name: "Rifter"}, GroupID: 25, CategoryID: 6, Published: true, TypeDetails: TypeDetails{Mass: ptr(1067000.0)},
				DogmaAttributes: []DogmaAttribute{{AttributeID: 3, Value: 0}, {AttributeID: 4, Value: 1067000}},
				DogmaEffects:    []DogmaEffect{{EffectID: 511, IsDefault: false}}},
		},
		Regions:      {&Region{Entity: Entity{ID: 10000002, Name: "The Forge"}, Constellations: []int64{20000020}}},
		SolarSystems: {&SolarSystem{Entity: Entity{ID: 30000142, Name: "Jita"}, ConstellationID: 20000020, SecurityStatus: 0.9459, SecurityClass: "B", Position: &Position{X: -1.29e17, Y: 6.07e16, Z: 1.17e17}, Stations: []int64{60003760}}},
		Stations: {&Station{Entity: Entity{ID: 60003760, Name: "Jita IV - Moon 4 - Caldari Navy Assembly Plant"}, StationDetails: StationDetails{SystemID: 30000142, TypeID: 52678, Owner: 1000035,
			ReprocessingEfficiency: 0.5}, Services: []string{"docking", "market"}}},
		Structures: {&Structure{ID: 1021975535893, Name: "Jita - Keepstar", TypeID: 35834, CorporationID: 98000001, SystemID: 30000142, ProfileID: 1,
			State: "shield_vulnerable", ReinforceWeekday: 2, ReinforceHour: 18, Services: []Service{{Name: "Market", State: "online"}},
			NextReinforceWeekday: ptr(3), NextReinforceHour: ptr(20), NextReinforceApply: &apply,
			CurrentVul: []Window{{Day: 2, Hour: 18}}, NextVul: []Window{{Day: 3, Hour: 20}}, Access: []int64{90000001}}},
		Roles:     {&CharacterRoles{CharacterID: 90000001, CorporationID: 98000001, Roles: []string{RoleStationManager}}},
		Documents: {&Document{Seq: 1, Path: "/characters/90000001/bookmarks/", Body: json.RawMessage(`[{"bookmark_id":1}]`)}},
	}
}

// writeSample writes sample() as a snapshot at dir.
func writeSample(t *testing.T, dir string, gz bool) map[Kind][]Record {
	t.Helper()
	return writeSampleWith(t, dir, CreateOptions{Gzip: gz})
}

func writeSampleWith(t *testing.T, dir string, opts CreateOptions) map[Kind][]Record {
	t.Helper()
	recs := sample()
	opts.Source, opts.Created = "test", created
	w, err := Create(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		for _, r := range recs[k] {
			if err := w.Add(k, r); err != nil {
				t.Fatalf("add %s: %v", k, err)
			}
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return recs
}

func readAll(t *testing.T, s *Snapshot, k Kind) []Record {
	t.Helper()
	var out []Record
	err := s.Each(k, func(rec Record, line Line) error {
		if line.Key != rec.Key() || line.Number != int64(len(out)+1) {
			t.Errorf("%s: line %+v for record %d", k, line, rec.Key())
		}
		out = append(out, rec)
		return nil
	})
	if err != nil {
		t.Fatalf("each %s: %v", k, err)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, enc := range []struct {
		ext  string
		opts CreateOptions
	}{{"", CreateOptions{}}, {".gz", CreateOptions{Gzip: true}}, {".zst", CreateOptions{Zstd: true}}} {
		t.Run("jsonl"+enc.ext, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			want := writeSampleWith(t, dir, enc.opts)
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Manifest.Created.Equal(created) || s.Manifest.Source != "test" || s.Manifest.Format != FormatVersion {
				t.Errorf("manifest = %+v", s.Manifest)
			}
			if len(s.Hash) != 64 {
				t.Errorf("hash %q", s.Hash)
			}
			for _, k := range Kinds {
				fi := s.Manifest.Files[k]
				wantPath := string(k) + ".jsonl" + enc.ext
				if fi.Path != wantPath {
					t.Errorf("%s: path %q, want %q", k, fi.Path, wantPath)
				}
				if s.Count(k) != int64(len(want[k])) {
					t.Errorf("%s: count %d, want %d", k, s.Count(k), len(want[k]))
				}
				got := readAll(t, s, k)
				if !reflect.DeepEqual(got, want[k]) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want[k])
					t.Errorf("%s: read back\n%s\nwant\n%s", k, g, w)
				}
			}
		})
	}
}

func TestEachOfAbsentKindYieldsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	w, err := Create(dir, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Touch(Types); err != nil {
		t.Fatal(err)
	}
	s, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if s.Has(Characters) || !s.Has(Types) || s.Count(Types) != 0 {
		t.Errorf("has characters %v, has types %v (%d)", s.Has(Characters), s.Has(Types), s.Count(Types))
	}
	if _, err := Open(dir); err != nil {
		t.Fatalf("an empty file must open: %v", err)
	}
	if got := readAll(t, s, Characters); len(got) != 0 {
		t.Errorf("absent kind gave %d records", len(got))
	}
}

// plainSnapshot writes a snapshot of three types (ids 34, 35, 36) as plain
// JSON Lines, for tests that edit its files.
func plainSnapshot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	w, err := Create(dir, CreateOptions{Source: "test", Created: created})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{34, 35, 36} {
		if err := w.Add(Types, &Type{Entity: Entity{ID: id, Name: fmt.Sprintf("Mineral %d", id)}, GroupID: 18}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add(Regions, &Region{Entity: Entity{ID: 10000002, Name: "The Forge"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// setLines replaces the types file's lines and, when resync is set, fixes
// the manifest's digest and count so only the records themselves are wrong.
func setLines(t *testing.T, dir string, resync bool, lines ...string) {
	t.Helper()
	data := []byte(strings.Join(lines, "\n") + "\n")
	if err := os.WriteFile(filepath.Join(dir, "types.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if resync {
		n := 0
		for _, l := range lines {
			if strings.TrimSpace(l) != "" {
				n++
			}
		}
		editManifest(t, dir, func(m *Manifest) {
			sum := sha256.Sum256(data)
			m.Files[Types] = FileInfo{Path: "types.jsonl", SHA256: hex.EncodeToString(sum[:]), Records: int64(n)}
		})
	}
}

func editManifest(t *testing.T, dir string, fn func(m *Manifest)) {
	t.Helper()
	path := filepath.Join(dir, ManifestName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	fn(&m)
	out, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeManifest(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	line34 = `{"id":34,"name":"Mineral 34","description":"","published":false,"group_id":18}`
	line35 = `{"id":35,"name":"Mineral 35","description":"","published":false,"group_id":18}`
	line36 = `{"id":36,"name":"Mineral 36","description":"","published":false,"group_id":18}`
)

func TestOpenRejects(t *testing.T) {
	tests := []struct {
		name   string
		breaks func(t *testing.T, dir string)
		// want are the parts the message must hold: file, line, reason.
		want []string
	}{
		{"truncated line", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, line35[:30], line36)
		}, []string{"types.jsonl line 2: ", "truncated JSON record"}},
		{"id is not a number", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, strings.Replace(line35, `"id":35`, `"id":"abc"`, 1), line36)
		}, []string{"types.jsonl line 2: id: string is not a valid int64"}},
		{"group is text", func(t *testing.T, dir string) {
			setLines(t, dir, true, strings.Replace(line34, `"group_id":18`, `"group_id":"18"`, 1), line35)
		}, []string{"types.jsonl line 1: group_id: string is not a valid int64"}},
		{"category is text", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, strings.Replace(line35, `"group_id":18`, `"group_id":18,"category_id":"4"`, 1))
		}, []string{"types.jsonl line 2: category_id: string is not a valid int64"}},
		{"category is negative", func(t *testing.T, dir string) {
			setLines(t, dir, true, strings.Replace(line34, `"group_id":18`, `"group_id":18,"category_id":-4`, 1), line35)
		}, []string{"types.jsonl line 1: ", "category_id: must be a positive integer when present, got -4"}},
		{"not an object", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, `[1,2]`)
		}, []string{"types.jsonl line 2: ", "record is array, want a JSON object"}},
		{"invalid JSON", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, `{"id":35,,}`)
		}, []string{"types.jsonl line 2: ", "invalid JSON"}},
		{"trailing data", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34+` {}`)
		}, []string{"types.jsonl line 1: ", "trailing data"}},
		{"duplicate id", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, line35, line35)
		}, []string{"types.jsonl line 3: ", "duplicate id 35"}},
		{"out of order", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, line36, line35)
		}, []string{"types.jsonl line 3: ", "id 35 is out of order (after 36)"}},
		{"unknown field", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, strings.Replace(line35, `{`, `{"colour":"grey",`, 1))
		}, []string{"types.jsonl line 2: ", `unknown field "colour"`}},
		{"invalid record", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, strings.Replace(line35, `"group_id":18`, `"group_id":0`, 1))
		}, []string{"types.jsonl line 2: ", "group_id: must be a positive integer, got 0"}},
		{"line numbers count blank lines", func(t *testing.T, dir string) {
			setLines(t, dir, true, line34, "", line34)
		}, []string{"types.jsonl line 3: ", "duplicate id 34"}},
		{"checksum mismatch", func(t *testing.T, dir string) {
			setLines(t, dir, false, line34, strings.Replace(line35, "Mineral", "MineraL", 1), line36)
		}, []string{"types.jsonl: ", "checksum mismatch: manifest says "}},
		{"record count mismatch", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) {
				fi := m.Files[Types]
				fi.Records = 4
				m.Files[Types] = fi
			})
		}, []string{"types.jsonl: ", "record count mismatch: manifest says 4, file has 3"}},
		{"missing file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "regions.jsonl")); err != nil {
				t.Fatal(err)
			}
		}, []string{"regions.jsonl: ", "no such file"}},
		{"no manifest", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, ManifestName)); err != nil {
				t.Fatal(err)
			}
		}, []string{"manifest.json", "no such file"}},
		{"manifest is not JSON", func(t *testing.T, dir string) {
			writeManifest(t, dir, `{"format": 1,`)
		}, []string{"manifest.json: ", "unexpected EOF"}},
		{"manifest has an unknown field", func(t *testing.T, dir string) {
			writeManifest(t, dir, `{"format": 1, "files": {}, "checksum": "x"}`)
		}, []string{"manifest.json: ", `unknown field "checksum"`}},
		{"manifest of another format", func(t *testing.T, dir string) {
			writeManifest(t, dir, `{"format": 2, "files": {}}`)
		}, []string{"manifest.json: ", "format 2 is not supported (want 1)"}},
		{"manifest names an unknown kind", func(t *testing.T, dir string) {
			writeManifest(t, dir, `{"format": 1, "files": {"ships": {"path": "ships.jsonl"}}}`)
		}, []string{"manifest.json: ", `unknown kind "ships"`}},
		{"manifest path outside the convention", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) {
				fi := m.Files[Types]
				fi.Path = "../types.jsonl"
				m.Files[Types] = fi
			})
		}, []string{"manifest.json: ", `file of types must be types.jsonl, types.jsonl.gz or types.jsonl.zst, got "../types.jsonl"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := plainSnapshot(t)
			if _, err := Open(dir); err != nil {
				t.Fatalf("the unbroken snapshot does not open: %v", err)
			}
			tt.breaks(t, dir)
			s, err := Open(dir)
			if err == nil {
				t.Fatalf("Open succeeded (%+v), want an error", s.Manifest)
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, "snapshot "+dir) {
				t.Errorf("error %q does not start with the snapshot directory", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestOpenRejectsCorruptGzip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	writeSample(t, dir, true)
	path := filepath.Join(dir, "types.jsonl.gz")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if err == nil || !strings.Contains(err.Error(), "types.jsonl.gz") {
		t.Fatalf("Open = %v, want an error naming types.jsonl.gz", err)
	}
}

func TestWriterAbortLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "snap")
	w, err := Create(dir, CreateOptions{Gzip: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(Types, sample()[Types][0]); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Abort, %s: %v; want it absent", dir, err)
	}
	disktest.AssertOnly(t, parent)
}

func TestWriterCommitReplaces(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "snap")
	writeSample(t, dir, true)
	w, err := Create(dir, CreateOptions{Source: "second"})
	if err != nil {
		t.Fatal(err)
	}
	// While the new snapshot is written, the old one is still whole.
	if s, err := Open(dir); err != nil || s.Manifest.Source != "test" {
		t.Fatalf("old snapshot during the write: %v", err)
	}
	if err := w.Add(Regions, &Region{Entity: Entity{ID: 10000043, Name: "Domain"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Source != "second" || s.Has(Types) || s.Count(Regions) != 1 {
		t.Errorf("after the second commit: %+v", s.Manifest)
	}
	if _, err := os.Stat(filepath.Join(dir, "types.jsonl.gz")); !os.IsNotExist(err) {
		t.Errorf("a file of the old snapshot survived: %v", err)
	}
	disktest.AssertOnly(t, parent, "snap")
}

func TestWriterRejects(t *testing.T) {
	tests := []struct {
		name string
		add  func(w *Writer) error
		want string
	}{
		{"out of order", func(w *Writer) error {
			if err := w.Add(Regions, &Region{Entity: Entity{ID: 10000002, Name: "The Forge"}}); err != nil {
				return err
			}
			return w.Add(Regions, &Region{Entity: Entity{ID: 10000001, Name: "Derelik"}})
		}, "regions: id 10000001 written after 10000002"},
		{"duplicate", func(w *Writer) error {
			if err := w.AddRaw(Regions, 5, []byte(`{"id":5,"name":"x"}`)); err != nil {
				return err
			}
			return w.AddRaw(Regions, 5, []byte(`{"id":5,"name":"x"}`))
		}, "regions: id 5 written after 5"},
		{"invalid record", func(w *Writer) error {
			return w.Add(Types, &Type{Entity: Entity{ID: 34, Name: "Tritanium"}})
		}, "types id 34: group_id: must be a positive integer"},
		{"unknown kind", func(w *Writer) error {
			return w.AddRaw(Kind("ships"), 1, []byte(`{}`))
		}, `unknown snapshot kind "ships"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Create(filepath.Join(t.TempDir(), "snap"), CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			err = tt.add(w)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDecodeStopsOnCallbackError(t *testing.T) {
	stop := fmt.Errorf("enough")
	n := 0
	err := Decode(strings.NewReader(line34+"\n"+line35+"\n"), Types, "t", func(Record, Line) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("Decode = %v after %d records; want the callback's error after 1", err, n)
	}
}

func TestDecodeLongLinesAndNoFinalNewline(t *testing.T) {
	// A record longer than the reader's buffer, and a last line without '\n'.
	long := strings.Repeat("x", 200_000)
	in := fmt.Sprintf(`{"id":1,"name":"%s","group_id":1,"description":""}`+"\n"+`{"id":2,"name":"b","group_id":1,"description":""}`, long)
	var names []int
	err := Decode(strings.NewReader(in), Types, "t", func(rec Record, _ Line) error {
		names = append(names, len(rec.(*Type).Name))
		return nil
	})
	if err != nil || len(names) != 2 || names[0] != len(long) || names[1] != 1 {
		t.Errorf("Decode = %v, name lengths %v", err, names)
	}
}

// TestDecodeStreams reads a file far larger than the bound on live heap,
// checking the heap after collections while it reads: a reader that kept
// the file or its records would exceed it.
func TestDecodeStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 30 MB file")
	}
	path := filepath.Join(t.TempDir(), "characters.jsonl.gz")
	const n = 60_000
	writeCharacters(t, path, n)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	const bound = 16 << 20 // the plain file is about 30 MB
	count := 0
	var peak uint64
	err = Decode(zr, Characters, "characters.jsonl.gz", func(rec Record, _ Line) error {
		count++
		if count%15_000 == 0 {
			if h := liveHeap(); h > peak {
				peak = h
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("read %d records, want %d", count, n)
	}
	if peak > bound {
		t.Errorf("live heap reached %d bytes while reading; want under %d", peak, bound)
	}
}

func writeCharacters(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"name":"Pilot number %d of the stream test with a longish name","corporation_id":98000001,"description":"%s"}`+"\n",
			90000000+i, i, strings.Repeat("d", 400))
		if b.Len() > 1<<16 {
			if _, err := b.WriteTo(zw); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := b.WriteTo(zw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
