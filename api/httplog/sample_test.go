package httplog_test

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/httplog"
)

// Errors are always logged, refusals (420, 429) and the rest as the policy
// says, slow requests always; Counts add up to every request.
func TestLoggerKeeps(t *testing.T) {
	serve := func(k httplog.Keep) (lines []map[string]any, counts *httplog.Counts) {
		var buf bytes.Buffer
		counts = &httplog.Counts{}
		k.Counts = counts
		e := engine(httplog.Options{Logger: zerolog.New(&buf), Keep: k})
		e.GET("/status/420", func(c *gin.Context) { c.Status(420) })
		for _, path := range []string{"/v2/search/", "/status/420"} {
			for range 100 {
				e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
			}
		}
		for range 3 {
			e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/nowhere", nil))
		}
		return logLines(t, &buf), counts
	}
	byStatus := func(lines []map[string]any) map[float64]int {
		m := map[float64]int{}
		for _, l := range lines {
			m[l["status"].(float64)]++
		}
		return m
	}
	for _, tc := range []struct {
		keep              string
		slow              time.Duration
		ok, refused, miss int
	}{
		{"all", time.Hour, 100, 100, 3},
		{"errors", time.Hour, 0, 0, 3},
		{"1/10", time.Hour, 10, 10, 3},
		{"errors", time.Nanosecond, 100, 100, 3}, // every request is slow
	} {
		k, err := httplog.ParseKeep(tc.keep, tc.slow)
		if err != nil || k.String() != tc.keep {
			t.Fatalf("ParseKeep(%q) = %v, %v", tc.keep, k, err)
		}
		lines, counts := serve(k)
		got := byStatus(lines)
		if got[200] != tc.ok || got[420] != tc.refused || got[404] != tc.miss {
			t.Errorf("%s, slow %v: logged %v, want 200×%d 420×%d 404×%d", tc.keep, tc.slow, got, tc.ok, tc.refused, tc.miss)
		}
		if w, d := counts.Written.Load(), counts.Dropped.Load(); w != uint64(len(lines)) || w+d != 203 {
			t.Errorf("%s: counts written %d dropped %d for %d lines of 203 requests", tc.keep, w, d, len(lines))
		}
		for _, l := range lines {
			if s, ok := l["sampled"]; (ok && s.(float64) != 10) || (ok != (tc.keep == "1/10" && l["status"].(float64) != 404)) {
				t.Errorf("%s: line %v: sampled field wrong", tc.keep, l)
			}
		}
	}
	for _, bad := range []string{"", "some", "1/0", "1/x", "2/10"} {
		if _, err := httplog.ParseKeep(bad, 0); err == nil {
			t.Errorf("ParseKeep(%q) accepted", bad)
		}
	}
}
