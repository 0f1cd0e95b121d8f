package api

import (
	"net/http"
	"testing"
	"time"

	"gds/api/auth"
)

// testRelease is the release day of the lifecycle tests: ten days after
// testEpoch, so the helpers' default clock is before it.
var testRelease = time.Date(2026, 6, 11, 0, 0, 0, 0, time.UTC)

type moment struct {
	name string
	t    time.Time
}

// lifecycleMoments are the moments every transition is checked at.
func lifecycleMoments(release time.Time) []moment {
	return []moment{
		{"before release", release.Add(-time.Second)},
		{"release day", release},
		{"release + 13 days", release.AddDate(0, 0, 13).Add(23 * time.Hour)},
		{"release + 14 days", release.AddDate(0, 0, 14)},
		{"after", release.AddDate(0, 3, 0)},
	}
}

// released configures a test server for the lifecycle: release on
// testRelease, dev versions served when dev, and no error limiting (the
// tests ask for many errors on purpose).
func released(dev bool) func(*Deps) {
	return func(d *Deps) {
		d.ReleaseDay = testRelease
		d.DevEnabled = dev
		d.Limits.ErrorLimit, d.Limits.RateLimitsOff = -1, true
	}
}

func authMint(character int64, now time.Time, scopes ...string) auth.MintOptions {
	return auth.MintOptions{CharacterID: character, Scopes: scopes, Now: now}
}

// shape says which list shape an answer has.
type shape int

const (
	noShape      shape = iota
	shapeV1            // current_vul and next_vul, windows as stored
	shapeV1Empty       // current_vul and next_vul, empty
	shapeV2            // state and reinforce_*
)

func shapeOf(t testing.TB, body []byte) shape {
	t.Helper()
	list := listed(t, body)
	if len(list) == 0 {
		t.Fatalf("empty list, cannot tell its shape")
	}
	st := list[0] // structA1: stored windows are not empty
	switch {
	case st["state"] != nil && st["current_vul"] == nil:
		return shapeV2
	case st["state"] == nil && len(st["current_vul"].([]any)) > 0:
		return shapeV1
	case st["state"] == nil && len(st["current_vul"].([]any)) == 0:
		return shapeV1Empty
	}
	t.Fatalf("list entry %v has neither shape", st)
	return noShape
}

// TestStructuresLifecycle walks the calendar across the release with the
// dev version disabled and enabled, calling every prefix of every route
// the release touches, and checks status, Warning header and shape.
func TestStructuresLifecycle(t *testing.T) {
	const (
		ok204     = http.StatusNoContent
		gone      = http.StatusNotFound
		ok        = http.StatusOK
		deprecate = WarningDeprecated
	)
	type call struct {
		method, path, body string
		// bad sends an invalid body and no token: only a legacy PUT
		// answers 204 to that.
		bad bool
	}
	type want struct {
		status  int
		warning string
		shape   shape
	}
	listV1 := call{method: "GET", path: "/v1" + structuresPathA}
	listV2 := call{method: "GET", path: "/v2" + structuresPathA}
	listLatest := call{method: "GET", path: "/latest" + structuresPathA}
	listLegacy := call{method: "GET", path: "/legacy" + structuresPathA}
	listDev := call{method: "GET", path: "/dev" + structuresPathA}
	putV1 := call{method: "PUT", path: "/v1" + putPathA1, body: validWindowsBody}
	putV1Bad := call{method: "PUT", path: "/v1" + putPathA1, body: `[{"day":9}]`, bad: true}
	putLatest := call{method: "PUT", path: "/latest" + putPathA1, body: validWindowsBody}
	putLegacy := call{method: "PUT", path: "/legacy" + putPathA1, body: validWindowsBody}
	olderList := call{method: "GET", path: structuresPathA}
	olderPut := call{method: "PUT", path: "/structures/1000000000001/", body: validWindowsBody}

	before := map[call]want{
		listV1: {ok, "", shapeV1}, listLatest: {ok, "", shapeV1}, listLegacy: {gone, "", 0},
		putV1: {ok204, "", 0}, putV1Bad: {http.StatusUnauthorized, "", 0}, putLatest: {ok204, "", 0}, putLegacy: {gone, "", 0},
		olderList: {ok, "", shapeV1}, olderPut: {ok204, "", 0},
	}
	afterRelease := map[call]want{
		listV1: {ok, deprecate, shapeV1Empty}, listV2: {ok, "", shapeV2}, listLatest: {ok, "", shapeV2},
		listLegacy: {ok, deprecate, shapeV1Empty}, listDev: {gone, "", 0},
		putV1: {ok204, deprecate, 0}, putV1Bad: {ok204, deprecate, 0}, putLatest: {gone, "", 0}, putLegacy: {ok204, deprecate, 0},
		olderList: {gone, "", 0}, olderPut: {gone, "", 0},
	}
	removed := map[call]want{
		listV1: {ok, deprecate, shapeV1Empty}, listV2: {ok, "", shapeV2}, listLatest: {ok, "", shapeV2},
		listLegacy: {ok, deprecate, shapeV1Empty}, listDev: {gone, "", 0},
		putV1: {gone, "", 0}, putV1Bad: {gone, "", 0}, putLatest: {gone, "", 0}, putLegacy: {gone, "", 0},
		olderList: {gone, "", 0}, olderPut: {gone, "", 0},
	}
	expect := map[string]map[call]want{
		"before release": before, "release day": afterRelease, "release + 13 days": afterRelease,
		"release + 14 days": removed, "after": removed,
	}
	for _, dev := range []bool{false, true} {
		ts := newTestServer(t, structureFixture(), released(dev))
		sp := newSpecs(ts)
		for _, m := range lifecycleMoments(testRelease) {
			ts.clock.Set(m.t)
			wants := map[call]want{}
			for c, w := range expect[m.name] {
				wants[c] = w
			}
			if m.name == "before release" {
				// v2 is dev: disabled unless the server enables dev.
				if dev {
					wants[listV2] = want{ok, "", shapeV2}
					wants[listDev] = want{ok, "", shapeV2}
				} else {
					wants[listV2] = want{gone, "", 0}
					wants[listDev] = want{gone, "", 0}
				}
			}
			for c, w := range wants {
				var headers []string
				if !c.bad {
					scope := readStructures
					if c.method == "PUT" {
						scope = writeStructures
					}
					headers = bearer(ts.token(managerA, scope))
				}
				rec := sp.do(t, c.method, c.path, c.body, headers...)
				name := m.name + " (dev " + map[bool]string{false: "off", true: "on"}[dev] + "): " + c.method + " " + c.path
				if c.bad {
					name += " with a bad body and no token"
				}
				if rec.Code != w.status {
					t.Errorf("%s: %d %s, want %d", name, rec.Code, rec.Body, w.status)
					continue
				}
				if got := rec.Header().Get("Warning"); got != w.warning {
					t.Errorf("%s: Warning %q, want %q", name, got, w.warning)
				}
				if w.shape != noShape {
					if got := shapeOf(t, rec.Body.Bytes()); got != w.shape {
						t.Errorf("%s: shape %d, want %d", name, got, w.shape)
					}
				}
			}
		}
	}
}

// TestReleaseDayTimeOfDay: a release day given with a time of day still
// switches at 00:00 UTC of that day, and a zero one defaults to a day in
// the past (the released interface).
func TestReleaseDayTimeOfDay(t *testing.T) {
	ts := newTestServer(t, structureFixture(), func(d *Deps) { d.ReleaseDay = testRelease.Add(15 * time.Hour) })
	ts.clock.Set(testRelease.Add(time.Hour))
	rec := ts.do(http.MethodGet, "/latest"+structuresPathA, nil, bearer(ts.token(managerA, readStructures))...)
	if rec.Code != http.StatusOK || shapeOf(t, rec.Body.Bytes()) != shapeV2 {
		t.Errorf("01:00 on a release day given as 15:00: %d, want the v2 shape", rec.Code)
	}

	ts = newTestServer(t, structureFixture())
	rec = ts.do(http.MethodGet, "/latest"+structuresPathA, nil, bearer(ts.token(managerA, readStructures))...)
	if rec.Code != http.StatusOK || shapeOf(t, rec.Body.Bytes()) != shapeV2 {
		t.Errorf("default release day: %d, want the v2 shape as latest", rec.Code)
	}
	rec = ts.do(http.MethodPut, "/v1"+putPathA1, nil)
	if rec.Code != http.StatusNotFound {
		t.Errorf("default release day: v1 PUT answered %d, want 404 (removed)", rec.Code)
	}
}
