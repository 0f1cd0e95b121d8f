package analyst_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/indexer/indexertest"
	"gds/query/analyst"
	"gds/snapshots"
	"gds/snapshots/reinforce"
)

const sampleDir = "../../snapshots/sample"

// sample is the committed sample snapshot, its records by kind, and one
// generation built from it, shared by the analysts' tests of this package.
type sample struct {
	a    *analyst.Engine
	recs map[snapshots.Kind][]snapshots.Record
}

// loadSample reads the sample's records and builds a generation of it.
func loadSample(t *testing.T) *sample {
	t.Helper()
	snap, err := snapshots.Open(sampleDir)
	if err != nil {
		t.Fatal(err)
	}
	s := &sample{recs: map[snapshots.Kind][]snapshots.Record{}}
	for _, k := range snapshots.Kinds {
		if !snap.Has(k) {
			continue
		}
		if err := snap.Each(k, func(rec snapshots.Record, _ snapshots.Line) error {
			s.recs[k] = append(s.recs[k], rec)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.a = analyst.New(indexertest.Manager(t, sampleDir))
	return s
}

// TestAnalystSample runs the analysts' queries over one generation of the
// committed sample, checked against brute force over its records.
func TestAnalystSample(t *testing.T) {
	s := loadSample(t)
	t.Run("FieldTypes", func(t *testing.T) { testFieldTypes(t, s) })
	t.Run("Facets", func(t *testing.T) { testFacets(t, s) })
	t.Run("SortAndFields", func(t *testing.T) { testSortAndFields(t, s) })
	t.Run("Export", func(t *testing.T) { testExport(t, s) })
	t.Run("RefusesNamingValid", func(t *testing.T) { testRefusesNamingValid(t, s) })
	t.Run("RangesMatchBleve", func(t *testing.T) { testRangesMatchBleve(t, s) })
}

// count counts the records of kind that keep says yes to.
func (s *sample) count(kind snapshots.Kind, keep func(snapshots.Record) bool) uint64 {
	var n uint64
	for _, r := range s.recs[kind] {
		if keep(r) {
			n++
		}
	}
	return n
}

// regionOf is a system's region, by brute force over the records.
func (s *sample) regionOf(system int64) int64 {
	var cons int64
	for _, r := range s.recs[snapshots.SolarSystems] {
		if r.Key() == system {
			cons = r.(*snapshots.SolarSystem).ConstellationID
		}
	}
	for _, r := range s.recs[snapshots.Constellations] {
		if r.Key() == cons {
			return r.(*snapshots.Constellation).RegionID
		}
	}
	return 0
}

func (s *sample) query(t *testing.T, req analyst.Request) *analyst.Result {
	t.Helper()
	res, err := s.a.Query(context.Background(), req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	return res
}

// Every field is indexed with its type: each query below works only on a
// field of that type (a range over numbers, over instants, a boolean, an
// exact keyword, a derived region), and matches exactly the records a
// brute-force pass over the snapshot finds, which are neither none nor all.
func testFieldTypes(t *testing.T, s *sample) {
	cutoff := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	var someCorp *snapshots.Corporation
	for _, r := range s.recs[snapshots.Corporations] {
		if c := r.(*snapshots.Corporation); c.Ticker != "" && c.AllianceID != 0 {
			someCorp = c
			break
		}
	}
	if someCorp == nil {
		t.Fatal("the sample has no corporation in an alliance")
	}
	someStruct := s.recs[snapshots.Structures][7].(*snapshots.Structure)
	region := s.regionOf(someStruct.SystemID)
	fuelCut := someStruct.FuelExpires.Truncate(24 * time.Hour)
	cases := []struct {
		q    string
		cat  snapshots.Category
		kind snapshots.Kind
		keep func(snapshots.Record) bool
	}{
		{"security:<0.45", snapshots.CategorySolarSystem, snapshots.SolarSystems,
			func(r snapshots.Record) bool { return r.(*snapshots.SolarSystem).SecurityStatus < 0.45 }},
		{"security:>=0.45", snapshots.CategorySolarSystem, snapshots.SolarSystems,
			func(r snapshots.Record) bool { return r.(*snapshots.SolarSystem).SecurityStatus >= 0.45 }},
		{"member_count:>=100", snapshots.CategoryCorporation, snapshots.Corporations,
			func(r snapshots.Record) bool { return r.(*snapshots.Corporation).MemberCount >= 100 }},
		{`birthday:<"2015-01-01"`, snapshots.CategoryCharacter, snapshots.Characters,
			func(r snapshots.Record) bool {
				b := r.(*snapshots.Character).Birthday
				return b != nil && b.Before(cutoff)
			}},
		{`fuel_expires:>="` + fuelCut.Format(time.RFC3339) + `"`, snapshots.CategoryStructure, snapshots.Structures,
			func(r snapshots.Record) bool {
				f := r.(*snapshots.Structure).FuelExpires
				return f != nil && !f.Before(fuelCut)
			}},
		{"reinforce_hour:>=18", snapshots.CategoryStructure, snapshots.Structures,
			func(r snapshots.Record) bool { return r.(*snapshots.Structure).ReinforceHour >= 18 }},
		{"services_online:0", snapshots.CategoryStructure, snapshots.Structures,
			func(r snapshots.Record) bool {
				return reinforce.PowerMode(r.(*snapshots.Structure).Services) == reinforce.LowPower
			}},
		{"power_mode:low_power", snapshots.CategoryStructure, snapshots.Structures,
			func(r snapshots.Record) bool {
				return reinforce.PowerMode(r.(*snapshots.Structure).Services) == reinforce.LowPower
			}},
		{"state:armor_reinforce", snapshots.CategoryStructure, snapshots.Structures,
			func(r snapshots.Record) bool { return r.(*snapshots.Structure).State == "armor_reinforce" }},
		{fmt.Sprintf("region_id:%d", region), snapshots.CategoryStructure, snapshots.Structures,
			func(r snapshots.Record) bool { return s.regionOf(r.(*snapshots.Structure).SystemID) == region }},
		{fmt.Sprintf("alliance_id:%d", someCorp.AllianceID), snapshots.CategoryCharacter, snapshots.Characters,
			func(r snapshots.Record) bool { return r.(*snapshots.Character).AllianceID == someCorp.AllianceID }},
		{"ticker:" + strings.ToLower(someCorp.Ticker), snapshots.CategoryCorporation, snapshots.Corporations,
			func(r snapshots.Record) bool {
				return strings.EqualFold(r.(*snapshots.Corporation).Ticker, someCorp.Ticker)
			}},
		{"published:false", snapshots.CategoryInventoryType, snapshots.Types,
			func(r snapshots.Record) bool { return !r.(*snapshots.Type).Published }},
		{"category_id:6", snapshots.CategoryInventoryType, snapshots.Types,
			func(r snapshots.Record) bool { return r.(*snapshots.Type).CategoryID == 6 }},
		{"+category_id:6 +published:true", snapshots.CategoryInventoryType, snapshots.Types,
			func(r snapshots.Record) bool { ty := r.(*snapshots.Type); return ty.CategoryID == 6 && ty.Published }},
		{"level:>=4", snapshots.CategoryAgent, snapshots.Agents,
			func(r snapshots.Record) bool { return r.(*snapshots.Agent).Level >= 4 }},
		{`service:"Clone Bay"`, snapshots.CategoryStructure, snapshots.Structures,
			func(r snapshots.Record) bool {
				return slices.ContainsFunc(r.(*snapshots.Structure).Services, func(sv snapshots.Service) bool {
					return sv.Name == "Clone Bay" && sv.State == "online"
				})
			}},
	}
	for _, tc := range cases {
		want := s.count(tc.kind, tc.keep)
		if want == 0 || want == uint64(len(s.recs[tc.kind])) {
			t.Errorf("%s: the sample has %d of %d matching records; the case proves nothing", tc.q, want, len(s.recs[tc.kind]))
		}
		res := s.query(t, analyst.Request{Query: tc.q, Category: tc.cat, Limit: 1})
		if res.Total != want {
			t.Errorf("%s in %s: %d hits, brute force %d", tc.q, tc.cat, res.Total, want)
		}
	}
	// Every stored field is in the documents of each category it names:
	// faceting on it over all of them sees a value in at least one.
	for _, f := range analyst.Fields() {
		if !f.Stored {
			continue
		}
		for _, cat := range f.Categories {
			res := s.query(t, analyst.Request{Query: "*", Category: cat, Limit: 1, Facets: []string{f.Name}})
			if len(res.Facets) != 1 || res.Facets[0].Total == 0 {
				t.Errorf("%s (%s) in %s: no values indexed: %+v", f.Name, f.Type, cat, res.Facets)
			}
		}
	}
}

// Facets count exactly what a brute-force pass over the snapshot counts:
// terms of keywords (derived ones too), fixed ranges of numbers and dates.
func testFacets(t *testing.T, s *sample) {
	res := s.query(t, analyst.Request{Query: "*", Category: snapshots.CategoryStructure, Limit: 1,
		Facets: []string{"state", "region_id", "reinforce_hour", "power_mode"}, FacetSize: 100})
	want := map[string]map[string]int{}
	add := func(field, term string) {
		if want[field] == nil {
			want[field] = map[string]int{}
		}
		want[field][term]++
	}
	for _, r := range s.recs[snapshots.Structures] {
		st := r.(*snapshots.Structure)
		add("state", st.State)
		add("region_id", strconv.FormatInt(s.regionOf(st.SystemID), 10))
		add("reinforce_hour", strconv.Itoa(st.ReinforceHour))
		add("power_mode", reinforce.PowerMode(st.Services).String())
	}
	if res.Total != uint64(len(s.recs[snapshots.Structures])) {
		t.Errorf("* over structures: %d, want %d", res.Total, len(s.recs[snapshots.Structures]))
	}
	for _, f := range res.Facets {
		got := map[string]int{}
		for _, b := range f.Buckets {
			if b.Count > 0 {
				got[b.Term] = b.Count
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want[f.Field]) {
			t.Errorf("facet %s:\n got  %v\n want %v", f.Field, got, want[f.Field])
		}
	}
	if len(res.Facets) != 4 || len(res.Facets[2].Buckets) != 24 {
		t.Errorf("facets %+v: want 4, reinforce_hour with 24 buckets", res.Facets)
	}
	// A terms facet of a keyword the SDE importer derives: types by the
	// category of their group, every category counted.
	res = s.query(t, analyst.Request{Query: "*", Category: snapshots.CategoryInventoryType, Limit: 1,
		Facets: []string{"category_id"}, FacetSize: 100})
	cats := map[string]int{}
	for _, r := range s.recs[snapshots.Types] {
		if c := r.(*snapshots.Type).CategoryID; c != 0 {
			cats[strconv.FormatInt(c, 10)]++
		}
	}
	got := map[string]int{}
	for _, b := range res.Facets[0].Buckets {
		got[b.Term] = b.Count
	}
	if len(cats) < 3 || fmt.Sprint(got) != fmt.Sprint(cats) {
		t.Errorf("category_id facet:\n got  %v\n want %v", got, cats)
	}
	// A date range facet: birthdays by year.
	res = s.query(t, analyst.Request{Query: "*", Category: snapshots.CategoryCharacter, Limit: 1, Facets: []string{"birthday"}})
	years := map[string]int{}
	for _, r := range s.recs[snapshots.Characters] {
		if b := r.(*snapshots.Character).Birthday; b != nil {
			years[strconv.Itoa(b.Year())]++
		}
	}
	for _, b := range res.Facets[0].Buckets {
		if b.Count != years[b.Term] {
			t.Errorf("birthday facet %s: %d, brute force %d", b.Term, b.Count, years[b.Term])
		}
	}
	// A numeric range facet: security classes.
	res = s.query(t, analyst.Request{Query: "*", Category: snapshots.CategorySolarSystem, Limit: 1, Facets: []string{"security"}})
	high := int(s.count(snapshots.SolarSystems, func(r snapshots.Record) bool { return r.(*snapshots.SolarSystem).SecurityStatus >= 0.45 }))
	if b := res.Facets[0].Buckets; len(b) != 3 || b[2].Count != high || b[0].Count+b[1].Count+b[2].Count != len(s.recs[snapshots.SolarSystems]) {
		t.Errorf("security facet %+v: want 3 buckets, high %d, all %d", b, high, len(s.recs[snapshots.SolarSystems]))
	}
}

// Sorting orders hits by a stored field, either way, and fields= returns
// the records' values.
func testSortAndFields(t *testing.T, s *sample) {
	res := s.query(t, analyst.Request{Query: "*", Category: snapshots.CategoryCorporation, Limit: 50,
		Sort: []string{"-member_count"}, Fields: []string{"member_count", "ticker", "alliance_id"}})
	byID := map[int64]*snapshots.Corporation{}
	var counts []int64
	for _, r := range s.recs[snapshots.Corporations] {
		c := r.(*snapshots.Corporation)
		byID[c.ID] = c
		counts = append(counts, c.MemberCount)
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	if len(res.Hits) != 50 {
		t.Fatalf("%d hits, want 50", len(res.Hits))
	}
	for i, h := range res.Hits {
		c := byID[h.ID]
		if c == nil || h.Name != c.Name || h.Category != snapshots.CategoryCorporation {
			t.Fatalf("hit %+v is no corporation of the sample", h)
		}
		if h.Fields["member_count"] != float64(c.MemberCount) || h.Fields["ticker"] != strings.ToLower(c.Ticker) && h.Fields["ticker"] != c.Ticker {
			t.Errorf("hit %d fields %v, record member_count %d ticker %q", h.ID, h.Fields, c.MemberCount, c.Ticker)
		}
		if (c.AllianceID != 0) != (h.Fields["alliance_id"] != nil) || c.AllianceID != 0 && h.Fields["alliance_id"] != c.AllianceID {
			t.Errorf("hit %d alliance_id %v (%T), record %d", h.ID, h.Fields["alliance_id"], h.Fields["alliance_id"], c.AllianceID)
		}
		if float64(counts[i]) != h.Fields["member_count"] {
			t.Errorf("hit %d: member_count %v, the %dth largest is %d", i, h.Fields["member_count"], i, counts[i])
		}
	}
	// Ascending, over two categories at once, by a field both have.
	res = s.query(t, analyst.Request{Query: "alliance_id:*", Limit: 1000, Sort: []string{"alliance_id", "id"}, Fields: []string{"alliance_id"}})
	cats := map[snapshots.Category]bool{}
	for i, h := range res.Hits {
		cats[h.Category] = true
		if i > 0 && fmt.Sprint(res.Hits[i-1].Fields["alliance_id"]) > fmt.Sprint(h.Fields["alliance_id"]) {
			t.Fatalf("hits %d and %d out of order: %v then %v", i-1, i, res.Hits[i-1].Fields, h.Fields)
		}
	}
	if !cats[snapshots.CategoryCharacter] || !cats[snapshots.CategoryCorporation] {
		t.Errorf("alliance_id:* over all categories: categories %v, want characters and corporations", cats)
	}
	// Derived fields come from the generation's universe (its systems and
	// constellations): every structure's region and power mode.
	res = s.query(t, analyst.Request{Query: "*", Category: snapshots.CategoryStructure, Limit: 1000, Fields: []string{"region_id", "system_id", "power_mode"}})
	structs := map[int64]*snapshots.Structure{}
	for _, r := range s.recs[snapshots.Structures] {
		structs[r.Key()] = r.(*snapshots.Structure)
	}
	if len(res.Hits) != len(structs) {
		t.Fatalf("%d structures, the sample has %d", len(res.Hits), len(structs))
	}
	for _, h := range res.Hits {
		st := structs[h.ID]
		if h.Fields["region_id"] != s.regionOf(st.SystemID) || h.Fields["system_id"] != st.SystemID || h.Fields["power_mode"] != reinforce.PowerMode(st.Services).String() {
			t.Fatalf("structure %d fields %v; region %d of system %d", h.ID, h.Fields, s.regionOf(st.SystemID), st.SystemID)
		}
	}
}

// Exports stream every hit, page by page, in CSV and JSON Lines that parse
// back to the records; past the cap without a limit they refuse with a
// message saying so, and with a limit they stop at it.
func testExport(t *testing.T, s *sample) {
	defer analyst.SetExportLimits(70, 250)()
	req := analyst.Request{Query: "*", Category: snapshots.CategoryStructure, Fields: []string{"system_id", "service", "reinforce_hour"}, Sort: []string{"reinforce_hour"}}
	export := func(req analyst.Request, format string) (string, uint64, error) {
		var buf bytes.Buffer
		w, err := analyst.NewExportWriter(&buf, format)
		if err != nil {
			t.Fatal(err)
		}
		var total uint64
		err = s.a.Export(context.Background(), req,
			func(n uint64, fields []string) error { total = n; return w.Start(fields) },
			w.Row)
		if err == nil {
			err = w.Flush()
		}
		return buf.String(), total, err
	}
	// 600 structures, cap 250: refused with the message, before any row.
	out, _, err := export(req, analyst.FormatCSV)
	var tooLarge *analyst.ExportTooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, analyst.ErrBadQuery) || out != "" ||
		!strings.Contains(err.Error(), "more than the export cap of 250") {
		t.Fatalf("export past the cap: %q, err %v", out, err)
	}
	structs := map[int64]*snapshots.Structure{}
	for _, r := range s.recs[snapshots.Structures] {
		structs[r.Key()] = r.(*snapshots.Structure)
	}
	req.Limit = 250
	out, total, err := export(req, analyst.FormatCSV)
	if err != nil || total != uint64(len(structs)) {
		t.Fatalf("csv export: total %d, err %v", total, err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 251 || strings.Join(rows[0], ",") != "id,category,name,score,system_id,service,reinforce_hour" {
		t.Fatalf("csv: %d rows, header %v", len(rows), rows[0])
	}
	seen := map[string]bool{}
	last := -1
	for _, row := range rows[1:] {
		id, _ := strconv.ParseInt(row[0], 10, 64)
		st := structs[id]
		if st == nil || seen[row[0]] || row[2] != st.Name || row[4] != strconv.FormatInt(st.SystemID, 10) || row[6] != strconv.Itoa(st.ReinforceHour) {
			t.Fatalf("csv row %v: record %+v (or repeated)", row, st)
		}
		seen[row[0]] = true
		var online []string
		for _, sv := range st.Services {
			if sv.State == "online" {
				online = append(online, sv.Name)
			}
		}
		if row[5] != strings.Join(online, "|") {
			t.Errorf("csv row %s services %q, want %q", row[0], row[5], strings.Join(online, "|"))
		}
		if st.ReinforceHour < last {
			t.Fatalf("csv rows out of reinforce_hour order at %s", row[0])
		}
		last = st.ReinforceHour
	}
	// JSON Lines of every corporation (300: pages of 70, cap raised).
	defer analyst.SetExportLimits(70, 1000)()
	out, _, err = export(analyst.Request{Query: "*", Category: snapshots.CategoryCorporation, Fields: []string{"member_count"}}, analyst.FormatJSONL)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	ids := map[int64]bool{}
	for {
		var h analyst.Hit
		if err := dec.Decode(&h); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if ids[h.ID] || h.Category != snapshots.CategoryCorporation || h.Fields["member_count"] == nil {
			t.Fatalf("jsonl line %+v repeated or incomplete", h)
		}
		ids[h.ID] = true
	}
	if len(ids) != len(s.recs[snapshots.Corporations]) {
		t.Errorf("jsonl: %d corporations, want %d", len(ids), len(s.recs[snapshots.Corporations]))
	}
}

// Unknown fields, facets, sorts and categories are refused naming the
// valid ones.
func testRefusesNamingValid(t *testing.T, s *sample) {
	for _, tc := range []struct {
		req  analyst.Request
		want string
	}{
		{analyst.Request{Query: "colour:red"}, `no field "colour"; valid: name, words, id`},
		{analyst.Request{Query: "*", Category: snapshots.CategorySolarSystem, Facets: []string{"member_count"}}, `cannot facet on "member_count"; valid: region_id, constellation_id, security`},
		{analyst.Request{Query: "*", Sort: []string{"name"}}, `cannot sort by "name"; valid: id, score, corporation_id`},
		{analyst.Request{Query: "*", Fields: []string{"words"}}, `no stored field "words" to return; valid: *, corporation_id`},
		{analyst.Request{Query: "*", Category: "planet"}, `unknown category "planet"; valid: agent, alliance`},
		{analyst.Request{Query: "*", FacetSize: 1000, Facets: []string{"state"}}, "facet size must be from 1 to 100"},
	} {
		_, err := s.a.Query(context.Background(), tc.req)
		if !errors.Is(err, analyst.ErrBadQuery) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one containing %q", tc.req, err, tc.want)
		}
	}
	if _, err := analyst.NewExportWriter(io.Discard, "xml"); !errors.Is(err, analyst.ErrBadQuery) {
		t.Errorf("format xml: %v", err)
	}
}
