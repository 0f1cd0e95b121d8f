package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEndToEndCompatibilityDates drives the real binary with unprefixed
// paths and X-Compatibility-Date across the structures release, placed 20
// API days before today with --release-day: the day before, the list has
// the v1 shape and the PUT works; on the release day the list has the v2
// shape and the PUT is legacy (204 always, deprecated); 14 days later the
// PUT is removed.
func TestEndToEndCompatibilityDates(t *testing.T) {
	needsBinary(t)
	facts := readSample(t)
	bin := buildBinary(t)
	data := t.TempDir()
	// The API's date starts at 11:00 UTC.
	now := time.Now().UTC().Add(-11 * time.Hour)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	release := today.AddDate(0, 0, -20)
	srv := serveBinary(t, data, "--snapshot", sampleSnapshot, "--release-day", release.Format(time.DateOnly))
	defer srv.stop(t)

	mint := func(scopes ...string) string {
		t.Helper()
		return mintToken(t, bin, data, facts.manager, scopes)
	}
	read, write := mint("esi-corporations.read_structures.v1"), mint("esi-corporations.write_structures.v1")
	do := func(method, path, token, date, body string) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+srv.public+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if date != "" {
			req.Header.Set("X-Compatibility-Date", date)
		}
		return exchange(t, srv.client, req)
	}
	day := func(offset int) string { return release.AddDate(0, 0, offset).Format(time.DateOnly) }
	list := fmt.Sprintf("/corporations/%d/structures", facts.corp) // no trailing slash: also served
	put := fmt.Sprintf("/corporations/%d/structures/%d/", facts.corp, facts.corpStructure)
	const windows = `[{"day":1,"hour":20}]`

	shape := func(date string) (string, string) {
		t.Helper()
		status, hdr, body := do("GET", list, read, date, "")
		var entries []map[string]any
		if status != http.StatusOK || json.Unmarshal(body, &entries) != nil || len(entries) == 0 {
			t.Fatalf("list on %s: %d %s", date, status, body)
		}
		_, v1 := entries[0]["current_vul"]
		_, v2 := entries[0]["state"]
		switch {
		case v1 && !v2:
			return "v1", hdr.Get("X-Compatibility-Date")
		case v2 && !v1:
			return "v2", hdr.Get("X-Compatibility-Date")
		}
		t.Fatalf("list on %s: neither shape: %v", date, entries[0])
		return "", ""
	}
	if got, resolved := shape(day(-1)); got != "v1" || resolved >= release.Format(time.DateOnly) {
		t.Errorf("the day before the release: %s shape resolved to %s, want v1 before %s", got, resolved, day(0))
	}
	for _, d := range []int{0, 14, 20} {
		if got, resolved := shape(day(d)); got != "v2" || resolved > day(d) {
			t.Errorf("release + %d days: %s shape resolved to %s, want v2", d, got, resolved)
		}
	}

	if status, hdr, body := do("PUT", put, write, day(-1), windows); status != http.StatusNoContent || hdr.Get("Warning") != "" {
		t.Errorf("PUT before the release: %d %q %s, want 204 without a warning", status, hdr.Get("Warning"), body)
	}
	if status, hdr, body := do("PUT", put, "", day(3), `[{"day":9}]`); status != http.StatusNoContent ||
		!strings.HasPrefix(hdr.Get("Warning"), "299") || hdr.Get("X-Compatibility-Date") != day(0) {
		t.Errorf("PUT legacy: %d %v %s, want 204 always with a 299 warning, resolved to %s", status, hdr, body, day(0))
	}
	if status, hdr, body := do("PUT", put, write, day(14), windows); status != http.StatusNotFound || hdr.Get("X-Compatibility-Date") != day(14) {
		t.Errorf("PUT after removal: %d %s, want 404 resolved to %s", status, body, day(14))
	}

	// Without a date the unprefixed paths behave as before (the older
	// interface is gone after the release); a future date is 400.
	if status, _, _ := do("GET", list+"/", read, "", ""); status != http.StatusNotFound {
		t.Errorf("unprefixed list without a date after the release: %d, want 404", status)
	}
	if status, _, body := do("GET", list, read, today.AddDate(0, 0, 1).Format(time.DateOnly), ""); status != http.StatusBadRequest ||
		!strings.Contains(string(body), "2017-01-01 to "+today.Format(time.DateOnly)) {
		t.Errorf("a date tomorrow: %d %s, want 400 naming the valid range", status, body)
	}
	status, _, body := do("GET", "/meta/compatibility-dates", "", "", "")
	var dates struct {
		CompatibilityDates []string `json:"compatibility_dates"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &dates) != nil ||
		strings.Join(dates.CompatibilityDates, " ") != "2017-01-01 "+day(0)+" "+day(14) {
		t.Errorf("compatibility dates: %d %s, want 2017-01-01, %s and %s", status, body, day(0), day(14))
	}
}
