package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

func structuresSnapshot(t *testing.T) string {
	t.Helper()
	apply := time.Date(2026, 6, 2, 10, 0, 0, 0, time.UTC)
	wd, hr := 4, 3
	return indexertest.Snapshot(t, indexertest.Records{snapshots.Structures: {
		&snapshots.Structure{ID: 1001, Name: "Full", TypeID: 35832, CorporationID: 98000001, SystemID: 30000142,
			State: "shield_vulnerable", ReinforceWeekday: 2, ReinforceHour: 19,
			Services: []snapshots.Service{{Name: "Market", State: "offline"}, {Name: "Clone Bay", State: "online"}}},
		&snapshots.Structure{ID: 1002, Name: "Low", TypeID: 35832, CorporationID: 98000001, SystemID: 30000142,
			State: "hull_vulnerable", ReinforceWeekday: 2, ReinforceHour: 19,
			Services:             []snapshots.Service{{Name: "Market", State: "offline"}},
			NextReinforceWeekday: &wd, NextReinforceHour: &hr, NextReinforceApply: &apply},
		&snapshots.Structure{ID: 1003, Name: "Theirs", TypeID: 35832, CorporationID: 98000002, SystemID: 30000142,
			State: "shield_vulnerable", ReinforceWeekday: 0, ReinforceHour: 0},
	}})
}

func runGDS(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestStructuresCommandJSON(t *testing.T) {
	dir := structuresSnapshot(t)
	// Monday 2026-06-01 12:00 UTC.
	out, stderr, err := runGDS(t, "structures", "--snapshot", dir, "--corporation", "98000001", "--now", "2026-06-01T12:00:00Z", "--json")
	if err != nil {
		t.Fatalf("gds structures: %v\n%s", err, stderr)
	}
	var got []structureReport
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if len(got) != 2 || got[0].StructureID != 1001 || got[1].StructureID != 1002 {
		t.Fatalf("got %+v, want structures 1001 and 1002 only", got)
	}
	at := func(day, hour int) time.Time { return time.Date(2026, 6, day, hour, 0, 0, 0, time.UTC) }
	full, low := got[0], got[1]
	if full.PowerMode != "full_power" || strings.Join(full.Cycles, ",") != "armor_reinforce,hull_reinforce" {
		t.Errorf("full: mode %s cycles %v, want full_power with two cycles", full.PowerMode, full.Cycles)
	}
	// First exit: today's window around 19:00; final: Wednesday's.
	if !full.FirstExit.Start.Equal(at(1, 17)) || !full.FirstExit.End.Equal(at(1, 21)) {
		t.Errorf("full first exit %+v, want Mon 17:00–21:00", full.FirstExit)
	}
	if !full.FinalExit.Start.Equal(at(3, 17)) || !full.FinalExit.End.Equal(at(3, 21)) {
		t.Errorf("full final exit %+v, want Wed 17:00–21:00", full.FinalExit)
	}
	if full.Pending != nil || full.Schedule.Day != "Wednesday" {
		t.Errorf("full: pending %+v schedule %+v", full.Pending, full.Schedule)
	}
	if low.PowerMode != "low_power" || strings.Join(low.Cycles, ",") != "hull_reinforce" {
		t.Errorf("low: mode %s cycles %v, want low_power with the final cycle only", low.PowerMode, low.Cycles)
	}
	// The change to Friday 03:00 applies Tuesday 10:00: today's window
	// opens before that and keeps the old hour, while the final exit moves
	// from Wednesday 19:00 to Friday 03:00.
	if low.Pending == nil || low.Pending.Day != "Friday" || low.Pending.Hour != 3 || !low.Pending.Apply.Equal(at(2, 10)) {
		t.Errorf("low: pending %+v, want Friday 03:00 from Tuesday 10:00", low.Pending)
	}
	if !low.FirstExit.Start.Equal(at(1, 17)) {
		t.Errorf("low first exit %+v, want today's window (opens before the change applies)", low.FirstExit)
	}
	if !low.FinalExit.Start.Equal(at(5, 1)) || !low.FinalExit.End.Equal(at(5, 5)) {
		t.Errorf("low final exit %+v, want Fri 01:00–05:00", low.FinalExit)
	}
}

func TestStructuresCommandText(t *testing.T) {
	dir := structuresSnapshot(t)
	out, _, err := runGDS(t, "structures", "--snapshot", dir, "--corporation", "98000001", "--now", "2026-06-01T12:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 structures", "1001", "full_power", "armor_reinforce>hull_reinforce",
		"Wednesday 19:00", "Mon 2026-06-01 17:00–21:00", "1002", "low_power", "Friday 03:00 from 2026-06-02T10:00:00Z"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Theirs") {
		t.Errorf("output shows another corporation's structure:\n%s", out)
	}
	out, _, err = runGDS(t, "structures", "--snapshot", dir, "--corporation", "98000009")
	if err != nil || !strings.Contains(out, "no structures") {
		t.Errorf("corporation without structures: %q, %v", out, err)
	}
}

func TestStructuresCommandErrors(t *testing.T) {
	dir := structuresSnapshot(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"structures", "--corporation", "1"}, "--snapshot"},
		{[]string{"structures", "--snapshot", dir}, "--corporation"},
		{[]string{"structures", "--snapshot", dir, "--corporation", "-4"}, "--corporation"},
		{[]string{"structures", "--snapshot", dir, "--corporation", "1", "--now", "yesterday"}, "--now"},
		{[]string{"structures", "--snapshot", t.TempDir(), "--corporation", "1"}, "structures:"},
		{[]string{"structures", "--snapshot", dir, "--corporation", "1", "extra"}, "unexpected argument"},
	} {
		_, _, err := runGDS(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
	if _, _, err := runGDS(t, "structures", "--nope"); !errors.Is(err, errUsage) {
		t.Errorf("unknown flag: %v, want a usage error", err)
	}
}
