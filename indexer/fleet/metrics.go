package fleet

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of a publisher and a replica, for dashboards and tests.
const (
	MetricPublished         = "gds_fleet_published_generation"
	MetricPublishFailures   = "gds_fleet_publish_failures_total"
	MetricPublishUploaded   = "gds_fleet_publish_uploaded_bytes_total"
	MetricPublishDuration   = "gds_fleet_publish_last_duration_seconds"
	MetricPointer           = "gds_fleet_pointer_generation"
	MetricLagGenerations    = "gds_fleet_lag_generations"
	MetricLagSeconds        = "gds_fleet_lag_seconds"
	MetricGenerationAge     = "gds_fleet_generation_age_seconds"
	MetricFollowErrors      = "gds_fleet_follow_errors_total"
	MetricFollowLastSuccess = "gds_fleet_follow_last_success_timestamp_seconds"
	MetricFollowLastError   = "gds_fleet_follow_last_error_timestamp_seconds"
)

func desc(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }

var (
	descPublished       = desc(MetricPublished, "Generation the bucket's pointer names, as this publisher last wrote or read it.")
	descPublishFailures = desc(MetricPublishFailures, "Publishes that failed (the pointer stayed where it was).")
	descPublishUploaded = desc(MetricPublishUploaded, "Bytes of objects uploaded (files the bucket lacked).")
	descPublishDuration = desc(MetricPublishDuration, "Duration of the last publish.")
	descPointer         = desc(MetricPointer, "Generation the bucket's pointer names, as this replica last read it.")
	descLagGenerations  = desc(MetricLagGenerations, "Generations this replica is behind the pointer.")
	descLagSeconds      = desc(MetricLagSeconds, "Seconds since the pointer moved past this replica's live generation (0 when caught up).")
	descAge             = desc(MetricGenerationAge, "Age of the live generation: seconds since it was built.")
	descFollowErrors    = desc(MetricFollowErrors, "Checks of the bucket that failed (the live generation kept serving).")
	descLastSuccess     = desc(MetricFollowLastSuccess, "When a check of the bucket last succeeded (Unix time).")
	descLastError       = desc(MetricFollowLastError, "When a check of the bucket last failed (Unix time; 0: never).")
)

// Collector exports a publisher's or follower's status (either may be nil)
// as Prometheus metrics, read at every scrape.
type Collector struct {
	Publisher *Publisher
	Follower  *Follower
}

func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPublished, descPublishFailures, descPublishUploaded, descPublishDuration,
		descPointer, descLagGenerations, descLagSeconds, descAge, descFollowErrors, descLastSuccess, descLastError} {
		ch <- d
	}
}

func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	unix := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return float64(t.UnixNano()) / 1e9
	}
	if p := c.Publisher; p != nil {
		st := p.Status()
		gauge(descPublished, float64(st.Published))
		counter(descPublishFailures, float64(st.Failures))
		counter(descPublishUploaded, float64(st.Uploaded))
		if st.Last != nil {
			gauge(descPublishDuration, time.Duration(st.Last.Duration).Seconds())
		}
	}
	if f := c.Follower; f != nil {
		st := f.Status()
		gauge(descPointer, float64(st.Pointer))
		gauge(descLagGenerations, float64(st.LagGenerations))
		gauge(descLagSeconds, st.LagSeconds)
		if !st.LiveCreated.IsZero() {
			gauge(descAge, f.now().Sub(st.LiveCreated).Seconds())
		}
		counter(descFollowErrors, float64(st.Errors))
		gauge(descLastSuccess, unix(st.LastSuccess))
		gauge(descLastError, unix(st.LastErrorAt))
	}
}

// Status is the "fleet" section of /admin/status.
type Status struct {
	Publish *PublishStatus `json:"publish,omitempty"`
	Follow  *FollowStatus  `json:"follow,omitempty"`
}

// Status reports the publisher and follower.
func (c *Collector) Status() Status {
	var st Status
	if c.Publisher != nil {
		s := c.Publisher.Status()
		st.Publish = &s
	}
	if c.Follower != nil {
		s := c.Follower.Status()
		st.Follow = &s
	}
	return st
}
