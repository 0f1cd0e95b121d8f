package admin

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Build describes the running binary: what `gds version` prints, what
// /admin/status reports under "build" and what the gds_build_info metric
// labels. cmd/gds fills it from the binary's build information and the
// format packages.
type Build struct {
	// Version is the release version set at link time (make release), or
	// the module version Go stamped, or "devel".
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from, RevisionTime
	// that commit's time; Dirty is set when the tree had uncommitted
	// changes. All empty for a build outside a repository.
	Revision     string     `json:"revision,omitempty"`
	RevisionTime *time.Time `json:"revision_time,omitempty"`
	Dirty        bool       `json:"dirty"`
	GoVersion    string     `json:"go_version"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
	// Tags are the build tags the binary was built with.
	Tags []string `json:"tags,omitempty"`
	// Formats are the file formats this binary writes and reads.
	Formats []Format `json:"formats"`
}

// Format is one file format's versions: the one written and those read.
type Format struct {
	Name   string   `json:"name"`
	Writes string   `json:"writes"`
	Reads  []string `json:"reads"`
}

// MetricBuildInfo is the build's gauge, always 1, labelled as Prometheus
// labels its own prometheus_build_info.
const MetricBuildInfo = "gds_build_info"

// newBuildInfo is the gauge vector behind MetricBuildInfo.
func newBuildInfo() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: MetricBuildInfo,
		Help: "A metric with a constant '1' value labeled by the version, revision, Go version, platform and build tags gds was built with.",
	}, []string{"version", "revision", "goversion", "goos", "goarch", "tags"})
}

// SetBuild publishes b as the gds_build_info series (replacing any
// earlier one). The revision label of a build from a modified tree ends
// in "-modified", as Prometheus's own does.
func (m *Metrics) SetBuild(b Build) {
	if m == nil {
		return
	}
	rev := b.Revision
	if b.Dirty && rev != "" {
		rev += "-modified"
	}
	goos, goarch, _ := strings.Cut(b.Platform, "/")
	m.buildInfo.Reset()
	m.buildInfo.WithLabelValues(b.Version, rev, b.GoVersion, goos, goarch, strings.Join(b.Tags, ",")).Set(1)
}
