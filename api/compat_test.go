package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// compatDatesAt asks /meta/compatibility-dates with the clock at now.
func compatDatesAt(t *testing.T, ts *testServer, now time.Time) []string {
	t.Helper()
	ts.clock.Set(now)
	rec := ts.do(http.MethodGet, "/meta/compatibility-dates", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("compatibility-dates: %d %s", rec.Code, rec.Body)
	}
	var got CompatibilityDates
	decodeJSON(t, rec, &got)
	return got.CompatibilityDates
}

// TestCompatibilityDatesFollowTheClock: the dates are the table's change
// days (origin, release, PUT removal) up to the API's today, which starts
// at 11:00 UTC.
func TestCompatibilityDatesFollowTheClock(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	origin, release, removal := "2017-01-01", "2026-06-11", "2026-06-25"
	for _, tc := range []struct {
		now  time.Time
		want []string
	}{
		{testRelease.Add(-time.Hour), []string{origin}},
		{testRelease.Add(10*time.Hour + 59*time.Minute), []string{origin}},
		{testRelease.Add(11 * time.Hour), []string{origin, release}},
		{testRelease.AddDate(0, 0, 14).Add(11 * time.Hour), []string{origin, release, removal}},
		{testRelease.AddDate(1, 0, 0), []string{origin, release, removal}},
	} {
		if got := compatDatesAt(t, ts, tc.now); !slices.Equal(got, tc.want) {
			t.Errorf("at %s: %v, want %v", tc.now, got, tc.want)
		}
	}
}

// TestCompatibilityDateAddressing drives unprefixed paths with a date
// across the structures release and checks status, resolved date, Warning
// and shape.
func TestCompatibilityDateAddressing(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	now := testRelease.AddDate(0, 1, 0).Add(12 * time.Hour) // API today 2026-07-11
	ts.clock.Set(now)
	read := bearer(ts.token(managerA, readStructures))
	write := bearer(ts.token(managerA, writeStructures))
	date := func(d string) []string { return []string{HeaderCompatibilityDate, d} }
	with := func(a, b []string) []string { return append(append([]string(nil), a...), b...) }
	noSlash := strings.TrimSuffix(structuresPathA, "/")
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		resolved, warning        string
		shape                    shape
	}{
		{"list before the release", "GET", structuresPathA, "", with(read, date("2026-06-10")), 200, "2017-01-01", "", shapeV1Empty},
		{"list on the release day", "GET", structuresPathA, "", with(read, date("2026-06-11")), 200, "2026-06-11", "", shapeV2},
		{"list without the slash", "GET", noSlash, "", with(read, date("2026-06-11")), 200, "2026-06-11", "", shapeV2},
		{"date by query, rounded down", "GET", structuresPathA + "?compatibility_date=2026-06-20", "", read, 200, "2026-06-11", "", shapeV2},
		{"PUT before the release", "PUT", putPathA1, validWindowsBody, with(write, date("2026-06-10")), 204, "2017-01-01", "", 0},
		{"PUT before the release, bad body", "PUT", putPathA1, `[{"day":9}]`, with(write, date("2026-06-10")), 400, "2017-01-01", "", 0},
		{"PUT legacy: 204 always", "PUT", putPathA1, `[{"day":9}]`, date("2026-06-24"), 204, "2026-06-11", WarningDeprecated, 0},
		{"PUT removed", "PUT", putPathA1, validWindowsBody, with(write, date("2026-06-25")), 404, "2026-06-25", "", 0},
		{"older interface PUT has no date", "PUT", "/structures/1000000000001/", validWindowsBody, with(write, date("2026-06-10")), 404, "2017-01-01", "", 0},
		{"search", "GET", "/search?search=jita&categories=character", "", date("2017-01-01"), 200, "2017-01-01", "", 0},
		{"future date", "GET", "/search/?search=jita&categories=character", "", date("2026-07-12"), 400, "", "", 0},
		{"before the first date", "GET", "/search/?search=jita&categories=character", "", date("2016-12-31"), 400, "", "", 0},
		{"not a date", "GET", "/search/?search=jita&categories=character", "", date("yesterday"), 400, "", "", 0},
		{"header and query disagree", "GET", "/search/?search=jita&categories=character&compatibility_date=2026-06-11", "", date("2026-06-12"), 400, "", "", 0},
		{"no date: older interface removed", "GET", structuresPathA, "", read, 404, "", "", 0},
		{"no date, no slash", "GET", noSlash, "", read, 404, "", "", 0},
		{"no date: search, on the oldest date", "GET", "/search/?search=jita&categories=character", "", nil, 200, "2017-01-01", "", 0},
		{"prefixed ignores the date", "GET", "/v1" + structuresPathA, "", with(read, date("2026-06-11")), 200, "", WarningDeprecated, shapeV1Empty},
	} {
		rec := ts.do(tc.method, tc.path, strings.NewReader(tc.body), tc.headers...)
		if rec.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, rec.Code, rec.Body, tc.status)
			continue
		}
		if got := rec.Header().Get(HeaderCompatibilityDate); got != tc.resolved {
			t.Errorf("%s: %s %q, want %q", tc.name, HeaderCompatibilityDate, got, tc.resolved)
		}
		if got := rec.Header().Get("Warning"); got != tc.warning {
			t.Errorf("%s: Warning %q, want %q", tc.name, got, tc.warning)
		}
		if tc.shape != noShape {
			if got := shapeOf(t, rec.Body.Bytes()); got != tc.shape {
				t.Errorf("%s: shape %d, want %d", tc.name, got, tc.shape)
			}
		}
		if rec.Code >= 400 {
			msg := errorOf(t, rec)
			if tc.status == 400 && strings.Contains(tc.name, "date") && tc.name != "not a date" &&
				!strings.Contains(tc.name, "disagree") && !strings.Contains(msg, "2017-01-01 to 2026-07-11") {
				t.Errorf("%s: %q does not name the valid range", tc.name, msg)
			}
		}
	}
}

// TestCompatibilityDayStartsAt11UTC: at 10:59 UTC on the release day the
// API's date is still the day before, so the release day is in the future.
func TestCompatibilityDayStartsAt11UTC(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	ts.clock.Set(testRelease.Add(10*time.Hour + 59*time.Minute))
	hdr := append(bearer(ts.token(managerA, readStructures)), HeaderCompatibilityDate, "2026-06-11")
	if rec := ts.do("GET", structuresPathA, nil, hdr...); rec.Code != http.StatusBadRequest ||
		!strings.Contains(errorOf(t, rec), "to 2026-06-10") {
		t.Errorf("10:59 UTC: %d %s, want 400 naming 2026-06-10 as the last valid date", rec.Code, rec.Body)
	}
	ts.clock.Set(testRelease.Add(11 * time.Hour))
	hdr = append(bearer(ts.token(managerA, readStructures)), HeaderCompatibilityDate, "2026-06-11")
	if rec := ts.do("GET", structuresPathA, nil, hdr...); rec.Code != http.StatusOK || shapeOf(t, rec.Body.Bytes()) != shapeV2 {
		t.Errorf("11:00 UTC: %d %s, want the v2 shape", rec.Code, rec.Body)
	}
}

// TestChangelog: the release day names what appeared, became legacy and
// was removed, and breaks; the origin does not break.
func TestChangelog(t *testing.T) {
	ts := newTestServer(t, structureFixture(), released(false))
	ts.clock.Set(testRelease.AddDate(1, 0, 0))
	rec := ts.do(http.MethodGet, "/meta/changelog", nil)
	var got Changelog
	decodeJSON(t, rec, &got)
	byDate := map[string]ChangelogDay{}
	for _, d := range got.Changelog {
		byDate[d.Date] = d
	}
	has := func(list []ChangelogEntry, method, route string) bool {
		return slices.Contains(list, ChangelogEntry{Method: method, Route: route})
	}
	origin, release, removal := byDate["2017-01-01"], byDate["2026-06-11"], byDate["2026-06-25"]
	if len(got.Changelog) != 3 || origin.IsBreaking || !has(origin.Appeared, "get", "/v2/search/") {
		t.Errorf("changelog %+v: want 3 dates, the origin not breaking and listing /v2/search/", got)
	}
	if !release.IsBreaking || !has(release.Appeared, "get", "/v2"+corpStructsPath) ||
		!has(release.Legacy, "get", "/v1"+corpStructsPath) || !has(release.Legacy, "put", "/v1/corporations/{corporation_id}/structures/{structure_id}/") ||
		!has(release.Removed, "put", "/structures/{structure_id}/") || !has(release.Removed, "get", corpStructsPath) {
		t.Errorf("release day %+v: want v2 appeared, v1 list and PUT legacy, the older interface removed, breaking", release)
	}
	if !removal.IsBreaking || len(removal.Removed) != 1 || len(removal.Appeared)+len(removal.Legacy) != 0 {
		t.Errorf("removal day %+v: want only the v1 PUT removed, breaking", removal)
	}
}

// TestTenant: tranquility by header or datasource is accepted, anything
// else is 400, on data and meta routes alike.
func TestTenant(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	for _, tc := range []struct {
		path    string
		headers []string
		status  int
	}{
		{"/latest/search/?search=jita&categories=character", []string{HeaderTenant, "tranquility"}, 200},
		{"/latest/search/?search=jita&categories=character&datasource=tranquility", nil, 200},
		{"/latest/search/?search=jita&categories=character", []string{HeaderTenant, "singularity"}, 400},
		{"/meta/compatibility-dates", []string{HeaderTenant, "tranquility"}, 200},
		{"/meta/compatibility-dates", []string{HeaderTenant, "serenity"}, 400},
		{"/meta/compatibility-dates?datasource=singularity", nil, 400},
	} {
		rec := ts.do(http.MethodGet, tc.path, nil, tc.headers...)
		if rec.Code != tc.status {
			t.Errorf("%s %v: %d %s, want %d", tc.path, tc.headers, rec.Code, rec.Body, tc.status)
		}
		if rec.Code == 400 {
			errorOf(t, rec)
		}
	}
}

// An unprefixed answer depends on the compatibility date and the tenant:
// Vary names them with the other headers that change it, in one line
// (a cache that reads one Vary line must see them all); a prefixed one
// does not depend on either.
func TestDatedAnswersVary(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	for _, tc := range []struct {
		path    string
		headers []string
		want    string
	}{
		{"/search/?search=jita&categories=character", []string{HeaderCompatibilityDate, "2020-01-01"},
			"Accept-Encoding, Accept-Language, X-Compatibility-Date, X-Tenant"},
		{"/search?search=ji&categories=character", nil, "Accept-Encoding, X-Compatibility-Date, X-Tenant"},
		{"/meta/openapi.json", nil, "Accept-Encoding, X-Compatibility-Date"},
		{"/latest/search/?search=jita&categories=character", nil, "Accept-Encoding, Accept-Language"},
	} {
		rec := ts.do(http.MethodGet, tc.path, nil, tc.headers...)
		if got := rec.Header().Values("Vary"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s %v: %d, Vary %q, want %q", tc.path, tc.headers, rec.Code, got, tc.want)
		}
	}
}
