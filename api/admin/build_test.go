package admin_test

import (
	"bytes"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/api/admin"
)

// TestBuildInStatusAndMetrics: the build given to the operator handler is
// reported as given under "build" in /admin/status, and as one
// gds_build_info series labelled as Prometheus labels its own (a later
// SetBuild replaces it, a modified tree marks the revision).
func TestBuildInStatusAndMetrics(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	when := time.Date(2026, 11, 27, 17, 0, 0, 0, time.UTC)
	build := admin.Build{
		Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", RevisionTime: &when,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Tags: []string{"netgo", "osusergo"},
		Formats: []admin.Format{{Name: "name table", Writes: "GDSTBL04", Reads: []string{"GDSTBL03", "GDSTBL04"}}},
	}
	h := admin.New(admin.Options{Indexer: mgr, Metrics: metrics, Logger: zerolog.New(io.Discard), Build: &build})
	var st struct {
		Build *admin.Build `json:"build"`
	}
	r := do(t, h, "GET", "/admin/status", "")
	r.decode(t, &st)
	if r.status != 200 || st.Build == nil || !reflect.DeepEqual(*st.Build, build) {
		t.Errorf("/admin/status = %d %s, want build %+v", r.status, r.body, build)
	}
	if !bytes.Contains(r.body, []byte(`"revision_time":"2026-11-27T17:00:00Z"`)) {
		t.Errorf("/admin/status: revision_time not in RFC 3339: %s", r.body)
	}

	metrics.SetBuild(admin.Build{Version: "v0.0.1", GoVersion: "go1.0"})
	build.Dirty = true
	metrics.SetBuild(build)
	r = do(t, h, "GET", "/metrics", "")
	want := admin.MetricBuildInfo + `{goarch="` + runtime.GOARCH + `",goos="` + runtime.GOOS + `",goversion="` + runtime.Version() +
		`",revision="0123456789abcdef0123456789abcdef01234567-modified",tags="netgo,osusergo",version="v1.2.3"} 1`
	if !bytes.Contains(r.body, []byte(want)) {
		t.Errorf("/metrics lacks %s", want)
	}
	if n := strings.Count(string(r.body), admin.MetricBuildInfo+"{"); n != 1 {
		t.Errorf("/metrics has %d %s series, want 1 (the last set)", n, admin.MetricBuildInfo)
	}

	// Without a build, status says nothing of one.
	bare := admin.New(admin.Options{Indexer: mgr, Logger: zerolog.New(io.Discard)})
	if r := do(t, bare, "GET", "/admin/status", ""); bytes.Contains(r.body, []byte(`"build"`)) {
		t.Errorf("/admin/status without a build: %s", r.body)
	}
}
