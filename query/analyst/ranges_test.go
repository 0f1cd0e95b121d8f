package analyst_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query/analyst"
	"gds/snapshots"
)

// rangeRecords adds numeric and date values to nameRecords' characters
// and systems, and corporations and agents: few distinct values (so
// bounds fall on values), missing ones, instants bleve cannot hold (left
// out of its index), negative numbers and -0. Each later gen changes a
// few values and removes a few characters (a delta small enough to be
// one: its kept entries' values come from the previous delta's columns).
func rangeRecords(n, gen int) indexertest.Records {
	recs := nameRecords(n, 0)
	day := time.Date(2003, 5, 6, 7, 8, 9, 0, time.UTC)
	var chars []snapshots.Record
	for _, r := range recs[snapshots.Characters] {
		c := r.(*snapshots.Character)
		k := int(c.ID - 90000000)
		if gen >= 1 && k%97 == 5 {
			continue
		}
		if gen >= 1 && k%50 == 1 || gen >= 2 && k%50 == 2 {
			k += 3
		}
		switch k % 11 {
		case 0: // no birthday
		case 1:
			t := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) // before bleve's first instant
			c.Birthday = &t
		case 2:
			t := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) // after its last
			c.Birthday = &t
		default:
			t := day.AddDate(k%7, 0, k%5).Add(time.Duration(k%3) * time.Second)
			c.Birthday = &t
		}
		chars = append(chars, c)
	}
	recs[snapshots.Characters] = chars
	for i, r := range recs[snapshots.SolarSystems] {
		s := r.(*snapshots.SolarSystem)
		// The same in every build: a changed universe rebuilds systems.
		s.SecurityStatus = []float64{-0.99, -0.5, math.Copysign(0, -1), 0, 0.05, 0.1, 0.45, 0.449, 0.45000000000000001, 1}[i%10]
	}
	for i := range 90 {
		members, level := (i*7)%23, i%6
		if gen >= 1 && i%30 == 1 {
			members++
		}
		if gen >= 2 && i%30 == 2 {
			level = (level + 1) % 6
		}
		recs[snapshots.Corporations] = append(recs[snapshots.Corporations], &snapshots.Corporation{
			Entity: indexertest.Named(98000000+int64(i), fmt.Sprintf("Corp %d", i)), Ticker: fmt.Sprint(i), MemberCount: int64(members)})
		recs[snapshots.Agents] = append(recs[snapshots.Agents], &snapshots.Agent{
			Entity: indexertest.Named(3000000+int64(i), fmt.Sprintf("Agent %d", i)), Level: level})
	}
	return recs
}

// rangeClause makes a random range over one of the numeric and date
// fields of cat (of every category for ""), on or between the values
// rangeRecords gives.
func rangeClause(rng *rand.Rand, cat snapshots.Category) string {
	op := []string{">=", ">", "<", "<="}[rng.IntN(4)]
	field := rng.IntN(5)
	switch cat {
	case snapshots.CategoryCorporation:
		field = 0
	case snapshots.CategorySolarSystem:
		field = 1
	case snapshots.CategoryAgent:
		field = 2
	case snapshots.CategoryCharacter:
		field = 3
	}
	switch field {
	case 0:
		return fmt.Sprintf("member_count:%s%d", op, rng.IntN(25)-1)
	case 1:
		return fmt.Sprintf("security:%s%s", op, []string{"0", "-0", "0.45", "0.449", "-0.5", "1", "0.3", "-1e-300"}[rng.IntN(8)])
	case 2:
		return fmt.Sprintf("level:%s%d", op, rng.IntN(7))
	}
	t := time.Date(2003+rng.IntN(9), time.Month(4+rng.IntN(3)), 1+rng.IntN(12), 7, 8, 9+rng.IntN(3), 0, time.UTC)
	var v string
	switch rng.IntN(5) {
	case 0:
		v = t.Format("2006-01-02")
	case 1:
		v = t.In(time.FixedZone("", 2*3600)).Format(time.RFC3339) // the same instant in another zone
	case 2:
		v = "1700-01-01T00:00:00Z"
	default:
		v = t.Format(time.RFC3339)
	}
	return fmt.Sprintf(`birthday:%s"%s"`, op, v)
}

// Ranges of numeric and date fields are answered from the value columns:
// on generated values (bounds on values and between them, either
// inclusive, dates in other zones and forms, -0 and 0, instants bleve
// cannot hold), alone, with one another and with name patterns (and, or,
// not), in one category and across all, before and after incremental
// builds (a delta's columns hiding base entries, then a base rewritten
// from the columns), their totals, hits and stored fields equal bleve's.
func TestRangeQueriesMatchBleve(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 25))
	m, a := openEngine(t, false)
	const n = 400
	byTables := 0
	for gen := range 4 {
		recs := rangeRecords(n, min(gen, 2))
		if gen == 3 { // past the delta's limit: the base is written again from the columns
			for i, r := range recs[snapshots.Characters] {
				if i%4 == 0 {
					r.(*snapshots.Character).Name += " again"
				}
			}
		}
		res := indexertest.Build(t, m, indexer.BuildRequest{Snapshot: indexertest.Snapshot(t, recs), Trigger: "test"})
		if gen > 0 && !res.Incremental {
			t.Fatalf("build %d not incremental: the patched columns go untested", gen)
		}
		if live := m.Live(); (gen == 1 || gen == 2) && live.Deltas[snapshots.CategoryCharacter] == 0 || gen == 3 && live.Deltas[snapshots.CategoryCharacter] != 0 {
			t.Fatalf("build %d: character delta %d", gen, live.Deltas[snapshots.CategoryCharacter])
		}
		if got := m.Parts().Analysts; got != res.Generation {
			t.Fatalf("analysts answer from generation %d, want %d", got, res.Generation)
		}
		var names []string
		for _, r := range recs[snapshots.Characters] {
			names = append(names, r.(*snapshots.Character).Name)
		}
		forms := []string{"%r", "%r", "+%r +%r", "%r %r", "-%r", "+%r -%r", "+name:%s +%r", "name:%s %r", "+%r -name:%s",
			"+%r +corporation_id:98000003", "+%r name:%s name:%s", "-%r -%r"}
		for i := range 60 {
			var cat snapshots.Category
			if i%3 != 0 {
				cat = []snapshots.Category{snapshots.CategoryCharacter, snapshots.CategoryCharacter, snapshots.CategoryCorporation,
					snapshots.CategorySolarSystem, snapshots.CategoryAgent}[rng.IntN(5)]
			}
			q := forms[i%len(forms)]
			if cat != snapshots.CategoryCharacter {
				q = strings.ReplaceAll(q, "corporation_id:98000003", "name:corp*")
			}
			for strings.Contains(q, "%r") {
				q = strings.Replace(q, "%r", rangeClause(rng, cat), 1)
			}
			for strings.Contains(q, "%s") {
				q = strings.Replace(q, "%s", namePattern(rng, names), 1)
			}
			req := analyst.Request{Query: q, Category: cat, Limit: analyst.MaxLimit}
			if i%5 == 0 && (cat == "" || cat == snapshots.CategoryCharacter) {
				req.Fields = []string{"birthday"}
			}
			if analyst.AnsweredByTables(req) {
				byTables++
			}
			restore := analyst.SetMaxNameIDs([]int{20000, 150, 10}[(i/3)%3])
			compareWithBleve(t, a, req)
			restore()
		}
	}
	if byTables < 180 {
		t.Errorf("only %d of 240 queries were answered by the tables", byTables)
	}
}

// A range matching more documents than an answer holds counts them all,
// and its first hits are the first in the tables' order.
func TestRangeQueryLargeMatch(t *testing.T) {
	recs := indexertest.Records{}
	day := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3000 {
		b := day.Add(time.Duration(i%100) * time.Hour)
		recs[snapshots.Characters] = append(recs[snapshots.Characters],
			&snapshots.Character{Entity: indexertest.Named(90000000+int64(i), fmt.Sprintf("Kari %s", strings.Repeat("a", 1+i%50))), CorporationID: 98000001, Birthday: &b})
	}
	a := analyst.New(indexertest.Manager(t, indexertest.Snapshot(t, recs)))
	for q, want := range map[string]uint64{`birthday:>="2010-01-01"`: 3000, `birthday:>"2010-01-01T00:00:00Z"`: 2970,
		`+birthday:<"2010-01-02" +name:kari*`: 720, `-birthday:>="2010-01-03T00:00:00+00:00"`: 1440} {
		req := analyst.Request{Query: q, Category: snapshots.CategoryCharacter, Limit: 3}
		if !analyst.AnsweredByTables(req) {
			t.Errorf("%s: not answered by the tables", q)
		}
		res, err := a.Query(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != want || len(res.Hits) != 3 {
			t.Fatalf("%s: total %d, %d hits; want %d and 3", q, res.Total, len(res.Hits), want)
		}
		for _, h := range res.Hits {
			if h.Name != "Kari a" {
				t.Errorf("%s: hit %d %q, want a shortest name first", q, h.ID, h.Name)
			}
		}
	}
}

// testRangesMatchBleve: on the sample, ranges of every numeric and date
// field with bounds on the records' own values (each operator), alone,
// two at once and with a name pattern, in their category and across all,
// answer what bleve answers.
func testRangesMatchBleve(t *testing.T, s *sample) {
	type field struct {
		name   string
		cat    snapshots.Category
		values []string
	}
	date := func(t *time.Time) string { return `"` + t.UTC().Format(time.RFC3339) + `"` }
	fields := []*field{{name: "birthday", cat: snapshots.CategoryCharacter}, {name: "member_count", cat: snapshots.CategoryCorporation},
		{name: "reinforce_weekday", cat: snapshots.CategoryStructure}, {name: "reinforce_hour", cat: snapshots.CategoryStructure},
		{name: "fuel_expires", cat: snapshots.CategoryStructure}, {name: "services_online", cat: snapshots.CategoryStructure},
		{name: "security", cat: snapshots.CategorySolarSystem}, {name: "level", cat: snapshots.CategoryAgent}}
	for _, r := range s.recs[snapshots.Characters] {
		if c := r.(*snapshots.Character); c.Birthday != nil {
			fields[0].values = append(fields[0].values, date(c.Birthday))
		}
	}
	for _, r := range s.recs[snapshots.Corporations] {
		fields[1].values = append(fields[1].values, fmt.Sprint(r.(*snapshots.Corporation).MemberCount))
	}
	for _, r := range s.recs[snapshots.Structures] {
		st := r.(*snapshots.Structure)
		fields[2].values = append(fields[2].values, fmt.Sprint(st.ReinforceWeekday))
		fields[3].values = append(fields[3].values, fmt.Sprint(st.ReinforceHour))
		if st.FuelExpires != nil {
			fields[4].values = append(fields[4].values, date(st.FuelExpires))
		}
		fields[5].values = append(fields[5].values, fmt.Sprint(len(st.Services)/2))
	}
	for _, r := range s.recs[snapshots.SolarSystems] {
		fields[6].values = append(fields[6].values, strconv.FormatFloat(r.(*snapshots.SolarSystem).SecurityStatus, 'g', -1, 64))
	}
	for _, r := range s.recs[snapshots.Agents] {
		fields[7].values = append(fields[7].values, fmt.Sprint(r.(*snapshots.Agent).Level))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	clause := func(f *field) string {
		if len(f.values) == 0 {
			t.Fatalf("the sample has no %s", f.name)
		}
		return f.name + ":" + []string{">=", ">", "<", "<="}[rng.IntN(4)] + f.values[rng.IntN(len(f.values))]
	}
	for i := range 48 {
		f := fields[i%len(fields)]
		q := clause(f)
		switch i % 4 {
		case 1:
			q = "+" + q + " -" + clause(f)
		case 2:
			q = "+" + q + " +name:*a*"
		case 3:
			other := f
			if i%3 == 0 { // across all categories: any field
				other = fields[rng.IntN(len(fields))]
			}
			q = q + " " + clause(other)
		}
		// All hits are compared when they fit (bleve's first ones are in
		// an order of its own); a limit of 100 keeps it cheap.
		req := analyst.Request{Query: q, Limit: 100}
		if i%3 != 0 {
			req.Category = f.cat
		}
		if !analyst.AnsweredByTables(req) {
			t.Errorf("%s (%s): not answered by the tables", q, req.Category)
		}
		compareWithBleve(t, s.a, req)
	}
}
