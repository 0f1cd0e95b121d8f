package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"gds/snapshots"
)

func smallConfig() Config {
	return Config{Characters: 5000, Corporations: 400, Alliances: 40, Structures: 800, Seed: 42, Gzip: true}
}

func generate(t *testing.T, cfg Config) *snapshots.Snapshot {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	if _, err := Generate(context.Background(), dir, cfg); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	snap, err := snapshots.Open(dir)
	if err != nil {
		t.Fatalf("snapshots.Open rejects the output: %v", err)
	}
	return snap
}

// all reads every record of kind k, checking ascending keys on the way.
func all[T snapshots.Record](t *testing.T, snap *snapshots.Snapshot, k snapshots.Kind) []T {
	t.Helper()
	var out []T
	var last int64
	err := snap.Each(k, func(rec snapshots.Record, l snapshots.Line) error {
		if len(out) > 0 && l.Key <= last {
			t.Fatalf("%s: key %d after %d", k, l.Key, last)
		}
		last = l.Key
		out = append(out, rec.(T))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	cfg := smallConfig()
	a, b := generate(t, cfg), generate(t, cfg)
	if a.Hash != b.Hash {
		t.Errorf("manifests differ: %s vs %s", a.Hash, b.Hash)
	}
	for k, fi := range a.Manifest.Files {
		x, err := os.ReadFile(filepath.Join(a.Dir, fi.Path))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b.Dir, fi.Path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s: two runs with the same seed differ", k)
		}
	}
	cfg.Seed++
	if c := generate(t, cfg); c.Hash == a.Hash {
		t.Error("another seed gave the same snapshot")
	}
}

// checkOrganization checks what corporations and alliances share: an ID
// in [lo, hi) and a ticker of 1 to 5 characters.
func checkOrganization(t *testing.T, what string, id, lo, hi int64, ticker string) {
	t.Helper()
	if id < lo || id >= hi {
		t.Errorf("%s id %d outside [%d, %d)", what, id, lo, hi)
	}
	if n := len(ticker); n == 0 || n > 5 {
		t.Errorf("%s %d: ticker %q", what, id, ticker)
	}
}

func TestPopulation(t *testing.T) {
	cfg := smallConfig()
	cfg.Gzip = false
	snap := generate(t, cfg)
	created := DefaultCreated(cfg.Seed)
	if !snap.Manifest.Created.Equal(created) {
		t.Errorf("created = %v, want %v", snap.Manifest.Created, created)
	}
	chars := all[*snapshots.Character](t, snap, snapshots.Characters)
	corps := all[*snapshots.Corporation](t, snap, snapshots.Corporations)
	alliances := all[*snapshots.Alliance](t, snap, snapshots.Alliances)
	if int64(len(chars)) != cfg.Characters || int64(len(corps)) != cfg.Corporations || int64(len(alliances)) != cfg.Alliances {
		t.Fatalf("got %d characters, %d corporations, %d alliances", len(chars), len(corps), len(alliances))
	}

	charByID := map[int64]*snapshots.Character{}
	members := map[int64]int64{}
	oldRange, newRange := 0, 0
	for _, c := range chars {
		switch {
		case c.ID >= charRange1Lo && c.ID < charRange1Hi:
			oldRange++
		case c.ID >= charRange2Lo && c.ID <= charRange2Hi:
			newRange++
		default:
			t.Errorf("character id %d outside the character ranges", c.ID)
		}
		if c.Birthday == nil || c.Birthday.Before(eveLaunch) || c.Birthday.After(created) {
			t.Errorf("character %d: birthday %v", c.ID, c.Birthday)
		}
		if c.SecurityStatus == nil || *c.SecurityStatus < -10 || *c.SecurityStatus > 5 {
			t.Errorf("character %d: security status %v", c.ID, c.SecurityStatus)
		}
		charByID[c.ID] = c
		members[c.CorporationID]++
	}
	if oldRange == 0 || newRange == 0 {
		t.Errorf("characters in old range %d, new range %d; want both", oldRange, newRange)
	}

	corpByID := map[int64]*snapshots.Corporation{}
	for _, c := range corps {
		corpByID[c.ID] = c
		checkOrganization(t, "corporation", c.ID, corpLo, corpHi, c.Ticker)
		if c.MemberCount != members[c.ID] || c.MemberCount < 1 {
			t.Errorf("corporation %d: member_count %d, %d characters belong to it", c.ID, c.MemberCount, members[c.ID])
		}
		ceo := charByID[c.CEOID]
		if ceo == nil || ceo.CorporationID != c.ID {
			t.Errorf("corporation %d: ceo %d is not a member", c.ID, c.CEOID)
		}
	}
	for _, c := range chars {
		corp := corpByID[c.CorporationID]
		if corp == nil {
			t.Fatalf("character %d: unknown corporation %d", c.ID, c.CorporationID)
		}
		if c.AllianceID != corp.AllianceID {
			t.Errorf("character %d: alliance %d, its corporation's is %d", c.ID, c.AllianceID, corp.AllianceID)
		}
	}
	inAlliance := 0
	for _, a := range alliances {
		checkOrganization(t, "alliance", a.ID, allianceLo, allianceHi, a.Ticker)
		exec := corpByID[a.ExecutorCorporationID]
		if exec == nil || exec.AllianceID != a.ID {
			t.Errorf("alliance %d: executor %d is not a member corporation", a.ID, a.ExecutorCorporationID)
		}
	}
	for _, c := range corps {
		if c.AllianceID != 0 {
			inAlliance++
		}
	}
	if inAlliance < len(alliances) || inAlliance == len(corps) {
		t.Errorf("%d of %d corporations in alliances", inAlliance, len(corps))
	}

	checkNames(t, chars)
	checkRoles(t, snap, charByID, corpByID)
	checkStructures(t, snap, created, charByID, corpByID)
	checkDocuments(t, snap)
}

// checkNames wants every shape of name players use, duplicates rare.
func checkNames(t *testing.T, chars []*snapshots.Character) {
	t.Helper()
	shapes := map[string]func(string) bool{
		"apostrophe": func(s string) bool { return strings.Contains(s, "'") },
		"hyphen":     func(s string) bool { return strings.Contains(s, "-") },
		"digit":      func(s string) bool { return strings.ContainsAny(s, "0123456789") },
		"single":     func(s string) bool { return !strings.Contains(s, " ") },
		"three":      func(s string) bool { return strings.Count(s, " ") == 2 },
		"lowercase":  func(s string) bool { return s == strings.ToLower(s) && strings.Contains(s, " ") },
		"non-ascii": func(s string) bool {
			return strings.IndexFunc(s, func(r rune) bool { return r > unicode.MaxASCII }) >= 0
		},
	}
	seen := map[string]int{}
	count := map[string]int{}
	for _, c := range chars {
		count[c.Name]++
		if n := len([]rune(c.Name)); n > maxNameRunes {
			t.Errorf("name %q is %d runes long", c.Name, n)
		}
		if strings.TrimSpace(c.Name) != c.Name || strings.Contains(c.Name, "  ") {
			t.Errorf("name %q has stray spaces", c.Name)
		}
		for shape, is := range shapes {
			if is(c.Name) {
				seen[shape]++
			}
		}
	}
	for shape := range shapes {
		if seen[shape] == 0 {
			t.Errorf("no character name of shape %s", shape)
		}
	}
	dups := 0
	for _, n := range count {
		dups += n - 1
	}
	if dups == 0 || dups > len(chars)/50 {
		t.Errorf("%d duplicate names in %d; want some, but rare", dups, len(chars))
	}
}

func checkRoles(t *testing.T, snap *snapshots.Snapshot, chars map[int64]*snapshots.Character, corps map[int64]*snapshots.Corporation) {
	t.Helper()
	managers := 0
	ceoManagers := map[int64]bool{}
	for _, r := range all[*snapshots.CharacterRoles](t, snap, snapshots.Roles) {
		c := chars[r.CharacterID]
		if c == nil {
			t.Fatalf("roles of unknown character %d", r.CharacterID)
		}
		if r.CorporationID != c.CorporationID {
			t.Errorf("roles of %d name corporation %d, the character is in %d", r.CharacterID, r.CorporationID, c.CorporationID)
		}
		if r.Has(snapshots.RoleStationManager) {
			managers++
			if corps[c.CorporationID].CEOID == c.ID {
				ceoManagers[c.CorporationID] = true
			}
		}
	}
	if len(ceoManagers) != len(corps) {
		t.Errorf("%d of %d CEOs are Station_Manager", len(ceoManagers), len(corps))
	}
	if managers <= len(corps) {
		t.Errorf("only CEOs are Station_Manager (%d)", managers)
	}
}

func checkStructures(t *testing.T, snap *snapshots.Snapshot, created time.Time, chars map[int64]*snapshots.Character, corps map[int64]*snapshots.Corporation) {
	t.Helper()
	types := map[int64]bool{}
	for _, st := range structureTypes {
		types[st.id] = true
	}
	systems := map[int64]bool{}
	for _, s := range builtinSystems {
		systems[s.id] = true
	}
	var lowPower, noServices, pending, shield int
	structures := all[*snapshots.Structure](t, snap, snapshots.Structures)
	for _, s := range structures {
		if s.ID < structureLo {
			t.Errorf("structure id %d below %d", s.ID, int64(structureLo))
		}
		if !types[s.TypeID] || !systems[s.SystemID] || corps[s.CorporationID] == nil {
			t.Errorf("structure %d: type %d, system %d, corporation %d", s.ID, s.TypeID, s.SystemID, s.CorporationID)
		}
		if !strings.Contains(s.Name, " - ") {
			t.Errorf("structure %d: name %q", s.ID, s.Name)
		}
		switch {
		case len(s.Services) == 0:
			noServices++
		case !online(s.Services):
			lowPower++
		}
		if s.State == "shield_vulnerable" {
			shield++
		}
		if s.NextReinforceApply != nil {
			pending++
			if !s.NextReinforceApply.After(created) || s.NextReinforceApply.After(created.Add(7*24*time.Hour)) {
				t.Errorf("structure %d: next_reinforce_apply %v not within 7 days of %v", s.ID, s.NextReinforceApply, created)
			}
		}
		if len(s.CurrentVul) != 21 || len(s.NextVul) != 21 {
			t.Errorf("structure %d: %d current and %d next windows, want 21", s.ID, len(s.CurrentVul), len(s.NextVul))
		}
		if len(s.Access) == 0 || len(s.Access) > accessMembers+accessAllies {
			t.Errorf("structure %d: %d characters in access", s.ID, len(s.Access))
		}
		owners := 0
		for _, id := range s.Access {
			c := chars[id]
			if c == nil {
				t.Fatalf("structure %d: access lists unknown character %d", s.ID, id)
			}
			if c.CorporationID == s.CorporationID {
				owners++
			} else if c.AllianceID == 0 || c.AllianceID != corps[s.CorporationID].AllianceID {
				t.Errorf("structure %d: character %d is neither in the owner nor its alliance", s.ID, id)
			}
		}
		if owners == 0 {
			t.Errorf("structure %d: no member of the owner has access", s.ID)
		}
	}
	n := len(structures)
	if lowPower == 0 || noServices == 0 || pending == 0 {
		t.Errorf("of %d structures: %d low power, %d without services, %d pending changes; want some of each", n, lowPower, noServices, pending)
	}
	if shield < n/2 {
		t.Errorf("only %d of %d structures shield_vulnerable", shield, n)
	}
}

func checkDocuments(t *testing.T, snap *snapshots.Snapshot) {
	t.Helper()
	docs := all[*snapshots.Document](t, snap, snapshots.Documents)
	paths := map[string]bool{}
	for _, d := range docs {
		if paths[d.Path] {
			t.Errorf("document path %s twice", d.Path)
		}
		paths[d.Path] = true
		var v any
		if err := json.Unmarshal(d.Body, &v); err != nil {
			t.Errorf("document %s: %v", d.Path, err)
		}
	}
	for _, suffix := range []string{"/bookmarks/", "/starbases/", "/wallets/1/journal/", "/wallet/journal/", "/contacts/"} {
		found := false
		for p := range paths {
			found = found || strings.HasSuffix(p, suffix)
		}
		if !found {
			t.Errorf("no document for a path ending in %s", suffix)
		}
	}
}

// base writes a small snapshot standing in for an imported SDE.
func base(t *testing.T, extraCorp int64) *snapshots.Snapshot {
	t.Helper()
	w, err := snapshots.Create(filepath.Join(t.TempDir(), "base"), snapshots.CreateOptions{Source: "test SDE", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	add := func(k snapshots.Kind, r snapshots.Record) {
		t.Helper()
		if err := w.Add(k, r); err != nil {
			t.Fatal(err)
		}
	}
	add(snapshots.Corporations, &snapshots.Corporation{Entity: snapshots.Entity{ID: 1000035, Name: "Caldari Navy"}, Ticker: "CN", NPC: true})
	add(snapshots.Corporations, &snapshots.Corporation{Entity: snapshots.Entity{ID: 1000044, Name: "School of Applied Knowledge"}, Ticker: "SAK", NPC: true})
	if extraCorp != 0 {
		add(snapshots.Corporations, &snapshots.Corporation{Entity: snapshots.Entity{ID: extraCorp, Name: "Squatter"}, Ticker: "SQ"})
	}
	add(snapshots.Corporations, &snapshots.Corporation{Entity: snapshots.Entity{ID: 99_999_999_999, Name: "Far Future"}, Ticker: "FF"})
	add(snapshots.SolarSystems, &snapshots.SolarSystem{Entity: snapshots.Entity{ID: 30000001, Name: "Tanoo"}, ConstellationID: 20000001})
	add(snapshots.SolarSystems, &snapshots.SolarSystem{Entity: snapshots.Entity{ID: 30000002, Name: "Lashesih"}, ConstellationID: 20000001})
	add(snapshots.Stations, &snapshots.Station{Entity: snapshots.Entity{ID: 60000004, Name: "Muvolailen X - Moon 3 - CBD Corporation Storage"}, StationDetails: snapshots.StationDetails{SystemID: 30000001, TypeID: 1531}})
	add(snapshots.Types, &snapshots.Type{Entity: snapshots.Entity{ID: 587, Name: "Rifter"}, GroupID: 25})
	add(snapshots.Documents, &snapshots.Document{Seq: 7, Path: "/corporations/1000035/standings/", Body: json.RawMessage(`[]`)})
	snap, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestFromBase(t *testing.T) {
	cfg := Config{Characters: 300, Corporations: 30, Alliances: 3, Structures: 50, Seed: 3, Base: base(t, 0)}
	snap := generate(t, cfg)
	if got, want := snap.Count(snapshots.Types), int64(1); got != want {
		t.Errorf("types: %d records, want the base's %d", got, want)
	}
	corps := all[*snapshots.Corporation](t, snap, snapshots.Corporations)
	if len(corps) != 3+30 || corps[0].ID != 1000035 || corps[1].ID != 1000044 || corps[len(corps)-1].ID != 99_999_999_999 {
		t.Errorf("corporations are not the base's merged with the generated: %d records", len(corps))
	}
	for _, s := range all[*snapshots.Structure](t, snap, snapshots.Structures) {
		if s.SystemID != 30000001 && s.SystemID != 30000002 {
			t.Errorf("structure %d in system %d, not one of the base", s.ID, s.SystemID)
		}
	}
	docs := all[*snapshots.Document](t, snap, snapshots.Documents)
	if docs[0].Seq != 7 || docs[1].Seq != 8 {
		t.Errorf("documents: the base's is not first or generated ones do not follow it: %d, %d", docs[0].Seq, docs[1].Seq)
	}
	if !strings.Contains(snap.Manifest.Source, "test SDE") {
		t.Errorf("source %q does not name the base", snap.Manifest.Source)
	}
}

func TestFromBaseCollision(t *testing.T) {
	cfg := Config{Characters: 300, Corporations: 30, Seed: 3}
	plain := generate(t, cfg)
	corps := all[*snapshots.Corporation](t, plain, snapshots.Corporations)
	cfg.Base = base(t, corps[5].ID)
	dir := filepath.Join(t.TempDir(), "out")
	_, err := Generate(context.Background(), dir, cfg)
	if err == nil || !strings.Contains(err.Error(), "base snapshot") {
		t.Fatalf("Generate with a colliding base: err = %v, want a collision error", err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("a failed generation left %s behind", dir)
	}
}

func TestCountsRejected(t *testing.T) {
	for name, cfg := range map[string]Config{
		"corporations without characters": {Corporations: 5},
		"characters without corporations": {Characters: 5},
		"alliances without corporations":  {Characters: 5, Corporations: 1, Alliances: 2},
		"structures without owners":       {Structures: 1},
		"negative":                        {Characters: -1},
		"too many characters":             {Characters: maxCharacters + 1, Corporations: 1},
		"created before launch":           {Created: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Generate(context.Background(), filepath.Join(t.TempDir(), "x"), cfg); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestCreatedEarly keeps every date before an early creation time.
func TestCreatedEarly(t *testing.T) {
	created := time.Date(2010, 3, 1, 11, 0, 0, 0, time.UTC)
	snap := generate(t, Config{Characters: 500, Corporations: 20, Alliances: 2, Structures: 10, Seed: 4, Created: created})
	if !snap.Manifest.Created.Equal(created) {
		t.Errorf("created = %v, want %v", snap.Manifest.Created, created)
	}
	for _, c := range all[*snapshots.Character](t, snap, snapshots.Characters) {
		if c.Birthday.After(created) || c.Birthday.Before(eveLaunch) {
			t.Errorf("character %d born %v", c.ID, c.Birthday)
		}
	}
	for _, c := range all[*snapshots.Corporation](t, snap, snapshots.Corporations) {
		if c.DateFounded.After(created) {
			t.Errorf("corporation %d founded %v", c.ID, c.DateFounded)
		}
	}
}

func TestEmpty(t *testing.T) {
	snap := generate(t, Config{Seed: 1})
	for _, k := range []snapshots.Kind{snapshots.Characters, snapshots.Structures, snapshots.Roles} {
		if !snap.Has(k) || snap.Count(k) != 0 {
			t.Errorf("%s: present %v with %d records; want an empty file", k, snap.Has(k), snap.Count(k))
		}
	}
}

func TestCharIDsAscendingInRange(t *testing.T) {
	// 43,483,647 fill the ranges of 2010–2016 and since 2016; more go
	// to the range before 2010 too.
	for _, n := range []int64{1, 2, 5, 1000, 10_000_000, 43_483_647, 43_483_648, 50_000_000, maxCharacters} {
		ids, err := newCharIDs(9, n)
		if err != nil {
			t.Fatal(err)
		}
		if early := n > 43_483_647; early != (ids.n0 > 0) {
			t.Errorf("n=%d: %d in the range before 2010", n, ids.n0)
		}
		// The boundaries and a stretch around each switch between ranges.
		var js []int64
		e := ids.n1 + ids.n0
		for _, j := range []int64{0, 1, ids.n1 - 2, ids.n1 - 1, ids.n1, ids.n1 + 1, e - 1, e, e + 1, n - 2, n - 1} {
			if j >= 0 && j < n && (len(js) == 0 || j > js[len(js)-1]) {
				js = append(js, j)
			}
		}
		prev := int64(0)
		for _, j := range js {
			id := ids.id(j)
			if id <= prev && j > 0 {
				t.Errorf("n=%d: id(%d)=%d not above %d", n, j, id, prev)
			}
			if !inCharRange(id) {
				t.Errorf("n=%d: id(%d)=%d out of range", n, j, id)
			}
			prev = id
		}
	}
	if _, err := newCharIDs(1, maxCharacters+1); err == nil {
		t.Error("more characters than IDs accepted")
	}
}

func inCharRange(id int64) bool {
	return id >= charRange1Lo && id < charRange1Hi || id >= charRange0Lo && id < charRange0Hi || id >= charRange2Lo && id <= charRange2Hi
}

func TestPermIsBijection(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 10, 997, 1000, 4096} {
		p := newPerm(uint64(n), n)
		seen := make([]bool, n)
		for i := range n {
			pos := p.forward(i)
			if pos < 0 || pos >= n || seen[pos] {
				t.Fatalf("n=%d: forward(%d)=%d repeats or is out of range", n, i, pos)
			}
			seen[pos] = true
			if back := p.backward(pos); back != i {
				t.Fatalf("n=%d: backward(forward(%d)) = %d", n, i, back)
			}
		}
	}
}

func TestCorpSizesSum(t *testing.T) {
	for _, tc := range []struct{ n, m int64 }{{1, 1}, {10, 10}, {1000, 7}, {100_000, 3000}} {
		start := corpSizes(5, tc.n, tc.m)
		if start[tc.m] != tc.n {
			t.Errorf("n=%d m=%d: sizes sum to %d", tc.n, tc.m, start[tc.m])
		}
		for c := range tc.m {
			if start[c+1]-start[c] < 1 {
				t.Errorf("n=%d m=%d: corporation %d is empty", tc.n, tc.m, c)
			}
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := Config{Characters: 200_000, Corporations: 10, Seed: 1}
	if _, err := Generate(ctx, filepath.Join(t.TempDir(), "x"), cfg); err == nil {
		t.Error("a cancelled generation succeeded")
	}
}

// BenchmarkGenerate reports the cost per character of a whole snapshot
// with the usual proportions of corporations, alliances and structures.
func BenchmarkGenerate(b *testing.B) {
	for _, gz := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "gzip"}[gz], func(b *testing.B) {
			cfg := Config{Characters: 200_000, Corporations: 10_000, Alliances: 400, Structures: 4_000, Seed: 1, Gzip: gz}
			dir := filepath.Join(b.TempDir(), "snap")
			for b.Loop() {
				if _, err := Generate(context.Background(), dir, cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cfg.Characters), "ns/character")
		})
	}
}

// Syllables joins exactly n of the given syllables, the same ones for the
// same random stream.
func TestSyllables(t *testing.T) {
	syl := []string{"ka", "ri", "jun", "ø"}
	for n := range 6 {
		a := Syllables(rand.New(rand.NewPCG(3, uint64(n))), n, syl...)
		b := Syllables(rand.New(rand.NewPCG(3, uint64(n))), n, syl...)
		if a != b {
			t.Errorf("n=%d: %q then %q from the same stream", n, a, b)
		}
		rest, count := a, 0
		for rest != "" {
			i := slices.IndexFunc(syl, func(s string) bool { return strings.HasPrefix(rest, s) })
			if i < 0 {
				t.Fatalf("n=%d: %q is not made of %q", n, a, syl)
			}
			rest, count = rest[len(syl[i]):], count+1
		}
		if count != n {
			t.Errorf("n=%d: %q holds %d syllables", n, a, count)
		}
	}
}
