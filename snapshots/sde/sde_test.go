package sde

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gds/snapshots"
)

const fixture = "testdata/sde"

// imported is a fixture import, read back through snapshots.Open.
type imported struct {
	res  *Result
	snap *snapshots.Snapshot
	recs map[snapshots.Kind]map[int64]snapshots.Record
}

func importDir(t *testing.T, dir string) (*imported, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "snapshot")
	w, err := snapshots.Create(out, snapshots.CreateOptions{Source: "test", Gzip: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Import(context.Background(), dir, w, Options{})
	if err != nil {
		w.Abort()
		return nil, err
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshots.Open(out)
	if err != nil {
		t.Fatalf("the imported snapshot does not open: %v", err)
	}
	im := &imported{res: res, snap: snap, recs: map[snapshots.Kind]map[int64]snapshots.Record{}}
	for _, k := range snapshots.Kinds {
		m := map[int64]snapshots.Record{}
		err := snap.Each(k, func(rec snapshots.Record, _ snapshots.Line) error {
			m[rec.Key()] = rec
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		im.recs[k] = m
	}
	return im, nil
}

// fixtureImport is shared by the tests that only read it: an import of
// the fixture takes seconds under the race detector.
var fixtureImport struct {
	sync.Mutex
	im *imported
}

func importFixture(t *testing.T) *imported {
	t.Helper()
	fixtureImport.Lock()
	defer fixtureImport.Unlock()
	if fixtureImport.im == nil {
		im, err := importDir(t, fixture)
		if err != nil {
			t.Fatalf("import of the fixture: %v", err)
		}
		fixtureImport.im = im
	}
	return fixtureImport.im
}

func get[T snapshots.Record](t *testing.T, im *imported, k snapshots.Kind, id int64) T {
	t.Helper()
	rec, ok := im.recs[k][id]
	if !ok {
		t.Fatalf("%s %d: not imported", k, id)
	}
	return rec.(T)
}

// countEntries counts the top-level entries of a fixture file, the way a
// reader of the file would, independently of the importer.
func countEntries(t *testing.T, rel string, re string) int64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixture, rel))
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(regexp.MustCompile(re).FindAll(raw, -1)))
}

func countFiles(t *testing.T, name string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(filepath.Join(fixture, "universe"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImportCountsMatchFixture(t *testing.T) {
	im := importFixture(t)
	const mapKeys, listItems = `(?m)^\d+:`, `(?m)^- `
	// Five agents of the export have no invNames entry; the fixture keeps them.
	const unnamedAgents = 5
	want := Counts{
		snapshots.Types:          countEntries(t, fileTypes, mapKeys),
		snapshots.Factions:       countEntries(t, fileFactions, mapKeys),
		snapshots.Corporations:   countEntries(t, fileCorporations, mapKeys),
		snapshots.Agents:         countEntries(t, fileAgents, mapKeys) - unnamedAgents,
		snapshots.Stations:       countEntries(t, fileStations, listItems),
		snapshots.Regions:        countFiles(t, "region.yaml"),
		snapshots.Constellations: countFiles(t, "constellation.yaml"),
		snapshots.SolarSystems:   countFiles(t, "solarsystem.yaml"),
	}
	for k, n := range want {
		if got := im.res.Written[k]; got != n {
			t.Errorf("%s: wrote %d, fixture has %d", k, got, n)
		}
		if got := im.snap.Count(k); got != n {
			t.Errorf("%s: manifest says %d, fixture has %d", k, got, n)
		}
	}
	if got := im.res.Skipped[snapshots.Agents]; got != unnamedAgents {
		t.Errorf("skipped agents: %d, want %d", got, unnamedAgents)
	}
	// The fixture's size, so a change of cut.go shows here.
	if want[snapshots.SolarSystems] != 13 || want[snapshots.Factions] != 27 || want[snapshots.Types] < 250 {
		t.Errorf("unexpected fixture: %v", want)
	}
}

func TestImportUniverse(t *testing.T) {
	im := importFixture(t)
	jita := get[*snapshots.SolarSystem](t, im, snapshots.SolarSystems, 30000142)
	if jita.Name != "Jita" || jita.ConstellationID != 20000020 {
		t.Errorf("Jita = %q in constellation %d, want Jita in 20000020", jita.Name, jita.ConstellationID)
	}
	if jita.SecurityStatus < 0.94 || jita.SecurityStatus > 0.95 || jita.SecurityClass != "B" || jita.StarID != 40009076 {
		t.Errorf("Jita security %v class %q star %d", jita.SecurityStatus, jita.SecurityClass, jita.StarID)
	}
	if jita.Position == nil || jita.Position.X == 0 {
		t.Errorf("Jita has no position: %+v", jita.Position)
	}
	if !slices.Contains(jita.Stations, 60003760) {
		t.Errorf("Jita's stations %v lack 60003760", jita.Stations)
	}
	// Planets with their moons and belts, and stargates, as ESI lists them.
	if len(jita.Planets) != 8 || jita.Planets[0].PlanetID != 40009077 || len(jita.Planets[0].Moons) != 0 ||
		jita.Planets[3].PlanetID != 40009082 || len(jita.Planets[3].Moons) != 12 || jita.Planets[3].Moons[0] != 40009083 {
		t.Errorf("Jita's planets = %+v", jita.Planets)
	}
	if !slices.Equal(jita.Stargates, []int64{50001248, 50001249, 50001250, 50013876, 50013913, 50013921, 50013928}) {
		t.Errorf("Jita's stargates = %v", jita.Stargates)
	}
	kimotoro := get[*snapshots.Constellation](t, im, snapshots.Constellations, 20000020)
	if kimotoro.Name != "Kimotoro" || kimotoro.RegionID != 10000002 || !slices.Contains(kimotoro.Systems, 30000142) {
		t.Errorf("Kimotoro = %+v", kimotoro)
	}
	if p := kimotoro.Position; p == nil || p.X != -1.3499640046818544e+17 || p.Z != 1.0332561731752134e+17 {
		t.Errorf("Kimotoro's position = %+v, want its centre", p)
	}
	forge := get[*snapshots.Region](t, im, snapshots.Regions, 10000002)
	if forge.Name != "The Forge" || !slices.Equal(forge.Constellations, []int64{20000020}) {
		t.Errorf("The Forge = %+v", forge)
	}
	for id, name := range map[int64]string{30002187: "Amarr", 30002659: "Dodixie", 30002510: "Rens", 30000144: "Perimeter"} {
		if s := get[*snapshots.SolarSystem](t, im, snapshots.SolarSystems, id); s.Name != name {
			t.Errorf("system %d = %q, want %q", id, s.Name, name)
		}
	}
	if d := get[*snapshots.Region](t, im, snapshots.Regions, 10000043); d.Name != "Domain" {
		t.Errorf("region 10000043 = %q, want Domain", d.Name)
	}
}

func TestImportStationsAndNPCs(t *testing.T) {
	im := importFixture(t)
	st := get[*snapshots.Station](t, im, snapshots.Stations, 60003760)
	if st.Name != "Jita IV - Moon 4 - Caldari Navy Assembly Plant" || st.SystemID != 30000142 || st.Owner != 1000035 || st.TypeID != 52678 {
		t.Errorf("station 60003760 = %+v", st)
	}
	for _, s := range []string{"market", "docking", "loyalty-point-store", "security-offices"} {
		if !slices.Contains(st.Services, s) {
			t.Errorf("station services %v lack %q", st.Services, s)
		}
	}
	navy := get[*snapshots.Corporation](t, im, snapshots.Corporations, 1000035)
	if navy.Name != "Caldari Navy" || !navy.NPC || navy.Ticker != "CN" || navy.FactionID != 500001 {
		t.Errorf("Caldari Navy = %+v", navy)
	}
	if navy.CEOID != 3004069 || navy.CreatorID != 1 || navy.Shares == nil || *navy.Shares != 100000000 {
		t.Errorf("Caldari Navy: ceo %d creator %d shares %v, want 3004069, 1 (EVE System), 100000000", navy.CEOID, navy.CreatorID, navy.Shares)
	}
	if navy.Descriptions["ja"] == "" || navy.Description == "" {
		t.Errorf("Caldari Navy lacks localized descriptions: %v", navy.Descriptions)
	}
	state := get[*snapshots.Faction](t, im, snapshots.Factions, 500001)
	if state.Name != "Caldari State" || state.Names["ja"] != "カルダリ連合" || state.CorporationID != 1000035 || state.StationCount == 0 {
		t.Errorf("Caldari State = %+v", state)
	}
	if _, ok := state.Names["it"]; ok {
		t.Errorf("Italian names are not a language of the service: %v", state.Names)
	}
	agent := get[*snapshots.Agent](t, im, snapshots.Agents, 3008771)
	if agent.Name != "Nehrnah Gorouyar" || agent.CorporationID != 1000086 || agent.LocationID != 60008494 || agent.Level != 1 {
		t.Errorf("agent 3008771 = %+v", agent)
	}
	if _, ok := im.recs[snapshots.Agents][3020032]; ok {
		t.Errorf("agent 3020032 has no name in invNames.yaml and must be skipped")
	}
}

func TestImportTypes(t *testing.T) {
	im := importFixture(t)
	trit := get[*snapshots.Type](t, im, snapshots.Types, 34)
	wantNames := map[string]string{"en": "Tritanium", "de": "Tritanium", "ja": "トリタニウム", "zh": "三钛合金", "es": "Tritanio"}
	for lang, name := range wantNames {
		if trit.Names[lang] != name {
			t.Errorf("Tritanium names[%s] = %q, want %q", lang, trit.Names[lang], name)
		}
	}
	if trit.Name != "Tritanium" || trit.GroupID != 18 || !trit.Published || trit.Volume == nil || *trit.Volume != 0.01 {
		t.Errorf("Tritanium = %+v", trit)
	}
	if !strings.Contains(trit.Description, "building block") || trit.Descriptions["de"] == "" {
		t.Errorf("Tritanium description %q / %v", trit.Description, trit.Descriptions)
	}
	// Minerals have no dogma in the export; ores and ships do.
	if len(trit.DogmaAttributes) != 0 {
		t.Errorf("Tritanium has dogma attributes %v; the export has none", trit.DogmaAttributes)
	}
	if veld := get[*snapshots.Type](t, im, snapshots.Types, 1230); len(veld.DogmaAttributes) == 0 {
		t.Errorf("Veldspar has no dogma attributes")
	}
	rifter := get[*snapshots.Type](t, im, snapshots.Types, 587)
	if rifter.Name != "Rifter" || len(rifter.DogmaAttributes) < 20 || len(rifter.DogmaEffects) == 0 {
		t.Errorf("Rifter: name %q, %d attributes, %d effects", rifter.Name, len(rifter.DogmaAttributes), len(rifter.DogmaEffects))
	}
	for id, name := range map[int64]string{621: "Caracal", 638: "Raven", 1230: "Veldspar", 691: "Rifter Blueprint"} {
		if ty := get[*snapshots.Type](t, im, snapshots.Types, id); ty.Name != name {
			t.Errorf("type %d = %q, want %q", id, ty.Name, name)
		}
	}
	// Each type carries its group's category from groups.yaml: ships 6,
	// minerals 4, modules 7, blueprints 9, asteroids 25.
	for id, cat := range map[int64]int64{587: 6, 638: 6, 24698: 6, 34: 4, 3001: 7, 691: 9, 1230: 25} {
		if ty := get[*snapshots.Type](t, im, snapshots.Types, id); ty.CategoryID != cat {
			t.Errorf("type %d (%s, group %d): category %d, want %d", id, ty.Name, ty.GroupID, ty.CategoryID, cat)
		}
	}
	// Every type has one: the fixture's groups.yaml holds each type's group.
	for _, rec := range im.recs[snapshots.Types] {
		if ty := rec.(*snapshots.Type); ty.CategoryID <= 0 {
			t.Errorf("type %d (group %d) has no category", ty.ID, ty.GroupID)
		}
	}
	// Every type of typeDogma.yaml got its dogma.
	withDogma := 0
	for _, rec := range im.recs[snapshots.Types] {
		if ty := rec.(*snapshots.Type); len(ty.DogmaAttributes)+len(ty.DogmaEffects) > 0 {
			withDogma++
		}
	}
	if want := countEntries(t, fileTypeDogma, `(?m)^\d+:`); int64(withDogma) != want {
		t.Errorf("%d types have dogma, typeDogma.yaml has %d", withDogma, want)
	}
}

// copyFixture copies the fixture so a test can break one file of it.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "sde")
	err := filepath.WalkDir(fixture, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixture, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// edit replaces the first match of old in a fixture file.
func edit(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	path := filepath.Join(dir, rel)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, dir, rel, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, rel), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// lineOf returns the 1-based line of the first occurrence of s in a file.
func lineOf(t *testing.T, dir, rel, s string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), s)
	if i < 0 {
		t.Fatalf("%s does not contain %q", rel, s)
	}
	return strings.Count(string(raw[:i]), "\n") + 1
}

// replacing breaks a fixture by replacing old with new in rel; the
// error must name the line new starts on.
func replacing(rel, old, new string) func(t *testing.T, dir string) int {
	return func(t *testing.T, dir string) int {
		edit(t, dir, rel, old, new)
		return lineOf(t, dir, rel, new)
	}
}

// removing breaks a fixture by removing the file rel.
func removing(rel string) func(t *testing.T, dir string) int {
	return func(t *testing.T, dir string) int {
		if err := os.Remove(filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
		return 0
	}
}

func TestImportErrorsNameFileAndLine(t *testing.T) {
	jitaFile := "universe/eve/TheForge/Kimotoro/Jita/solarsystem.yaml"
	tests := []struct {
		name string
		// breakIt edits the copy and returns the line the error must name
		// (0: no line).
		breakIt func(t *testing.T, dir string) int
		file    string
		reason  string
	}{
		{
			name:    "type group is not a number",
			breakIt: replacing(fileTypes, "  groupID: 18\n", "  groupID: abc\n"),
			file:    "fsd/types.yaml", reason: "cannot unmarshal !!str `abc` into int64",
		},
		{
			name:    "agent level is not a number",
			breakIt: replacing(fileAgents, "  level: 1\n", "  level: one\n"),
			file:    "fsd/agents.yaml", reason: "cannot unmarshal !!str `one` into int",
		},
		{
			name: "agent entry is not valid YAML",
			breakIt: func(t *testing.T, dir string) int {
				edit(t, dir, fileAgents, "  level: 1\n", "  level: [1\n")
				return 0
			},
			file: "fsd/agents.yaml", reason: "line",
		},
		{
			name: "garbage before the first type",
			breakIt: func(t *testing.T, dir string) int {
				edit(t, dir, fileTypeDogma, "", "oops\n")
				return 1
			},
			file: "fsd/typeDogma.yaml", reason: "want an integer key at column 0",
		},
		{
			name: "types out of order",
			breakIt: func(t *testing.T, dir string) int {
				edit(t, dir, fileTypes, "\n35:\n", "\n33:\n")
				return lineOf(t, dir, fileTypes, "\n33:\n") + 1
			},
			file: "fsd/types.yaml", reason: "type 33 is out of order (after 34)",
		},
		{
			name: "dogma of a type that does not exist",
			breakIt: func(t *testing.T, dir string) int {
				appendTo(t, dir, fileTypeDogma, "99999999:\n  dogmaAttributes: []\n  dogmaEffects: []\n")
				return lineOf(t, dir, fileTypeDogma, "99999999:")
			},
			file: "fsd/typeDogma.yaml", reason: "dogma for type 99999999, which fsd/types.yaml does not have",
		},
		{
			name:    "station position is text",
			breakIt: replacing(fileStations, "  x: ", "  x: far "),
			file:    "bsd/staStations.yaml", reason: "into float64",
		},
		{
			name:    "solar system security is text",
			breakIt: replacing(jitaFile, "security: 0.945913116665", "security: high"),
			file:    jitaFile, reason: "into float64",
		},
		{
			name:    "group category is not a number",
			breakIt: replacing(fileGroups, "  categoryID: 6\n", "  categoryID: ship\n"),
			file:    "fsd/groups.yaml", reason: "cannot unmarshal !!str `ship` into int64",
		},
		{
			name:    "missing groups file",
			breakIt: removing(fileGroups),
			file:    "fsd/groups.yaml", reason: "no such file",
		},
		{
			name:    "missing factions file",
			breakIt: removing(fileFactions),
			file:    "fsd/factions.yaml", reason: "no such file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyFixture(t)
			line := tt.breakIt(t, dir)
			_, err := importDir(t, dir)
			if err == nil {
				t.Fatal("import succeeded, want an error")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, tt.file) || !strings.Contains(msg, tt.reason) {
				t.Errorf("error %q does not name %s and %q", msg, tt.file, tt.reason)
			}
			if line > 0 && !regexp.MustCompile(regexp.QuoteMeta(tt.file)+` line `+strconv.Itoa(line)+`: `).MatchString(msg) {
				t.Errorf("error %q does not name line %d", msg, line)
			}
		})
	}
}

func TestImportStopsWhenCancelled(t *testing.T) {
	w, err := snapshots.Create(filepath.Join(t.TempDir(), "snapshot"), snapshots.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Import(ctx, fixture, w, Options{}); err != context.Canceled {
		t.Errorf("Import = %v, want context.Canceled", err)
	}
}

// celestials reads the IDs of planets, their moons and belts, and
// stargates from the export's layout, ignoring every other block.
func TestCelestialsFromLines(t *testing.T) {
	text := `border: false
center:
- 1.0
- 2.0
planets:
  40009050:
    asteroidBelts:
      40009051:
        position:
        - -3.0
      40009052:
        position: []
    celestialIndex: 1
    moons:
      40009053:
        npcStations:
          60000001:
            typeID: 1
    npcStations:
      60000002:
        typeID: 2
    position:
    - 1.0
  40009060:
    typeID: 11
secondarySun:
  itemID: 40009070
star:
  id: 40009049
stargates:
  50000001:
    destination: 50000002
  50000003:
    destination: 50000004
sunTypeID: 3800
`
	var c celestials
	for _, line := range strings.Split(text, "\n") {
		c.line([]byte(line))
	}
	want := []snapshots.Planet{{PlanetID: 40009050, Moons: []int64{40009053}, AsteroidBelts: []int64{40009051, 40009052}}, {PlanetID: 40009060}}
	if !reflect.DeepEqual(c.planets, want) {
		t.Errorf("planets = %+v, want %+v", c.planets, want)
	}
	if !slices.Equal(c.stargates, []int64{50000001, 50000003}) {
		t.Errorf("stargates = %v", c.stargates)
	}
}
