package admin

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gds/api/httplog"
	"gds/indexer"
	"gds/snapshots"
	"gds/snapshots/disk"
)

// Metrics holds the service's Prometheus metrics in a registry of its own
// (not the global one, so tests and several servers in one process do not
// collide). Its methods are what the public API's middleware calls
// (api.Metrics); all are safe for concurrent use and on a nil *Metrics.
type Metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	candidates    prometheus.Histogram
	verified      prometheus.Histogram
	cache         *prometheus.CounterVec
	errorLimited  prometheus.Counter
	rateLimited   *prometheus.CounterVec
	series        sync.Map // seriesKey → *requestSeries
	cacheHit      prometheus.Counter
	cacheMiss     prometheus.Counter
	builds        *prometheus.CounterVec
	buildFailures prometheus.Counter
	buildDuration prometheus.Gauge
	lastBuild     prometheus.Gauge
	buildInfo     *prometheus.GaugeVec
}

// Metric names, for dashboards and tests.
const (
	MetricRequests        = "gds_http_requests_total"
	MetricLatency         = "gds_http_request_duration_seconds"
	MetricCandidates      = "gds_search_candidates"
	MetricVerified        = "gds_search_verified"
	MetricCache           = "gds_search_cache_total"
	MetricErrorLimited    = "gds_error_limited_total"
	MetricRateLimited     = "gds_rate_limited_total"
	MetricBuilds          = "gds_index_builds_total"
	MetricBuildFailures   = "gds_index_build_failures_total"
	MetricBuildDuration   = "gds_index_last_build_duration_seconds"
	MetricLastBuild       = "gds_index_last_build_timestamp_seconds"
	MetricGeneration      = "gds_index_generation"
	MetricDocuments       = "gds_index_documents"
	MetricGenerationBuilt = "gds_index_generation_created_timestamp_seconds"
	MetricConnections     = "gds_http_connections_total"
	MetricHandedOver      = "gds_http_connections_handed_over_total"
	MetricHeld            = "gds_memory_held_bytes"
	MetricLogWritten      = "gds_request_log_lines_total"
	MetricLogDropped      = "gds_request_log_dropped_total"
	MetricYieldPauses     = "gds_build_yield_pauses_total"
	MetricYieldSeconds    = "gds_build_yield_seconds_total"
)

// NewMetrics returns the metrics, with Go runtime and process metrics
// (memory, goroutines, file descriptors) registered alongside.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricRequests, Help: "HTTP requests answered, by route template, version and status.",
	}, []string{"route", "version", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: MetricLatency, Help: "Time to answer HTTP requests, by route template, version and status.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "version", "status"})
	m.candidates = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: MetricCandidates, Help: "Candidate names a search took from the trigram tables.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 12),
	})
	m.verified = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: MetricVerified, Help: "Names a search verified against the text.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 12),
	})
	m.cache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricCache, Help: "Search response cache lookups, by result (hit, miss).",
	}, []string{"result"})
	m.errorLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Name: MetricErrorLimited, Help: "Requests answered 420 because the client spent its error budget.",
	})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricRateLimited, Help: "Requests answered 429 because the client's bucket of a rate-limit group was spent, by group.",
	}, []string{"group"})
	m.builds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricBuilds, Help: "Index build attempts, by trigger and result (ok, unchanged, failed).",
	}, []string{"trigger", "result"})
	m.buildFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: MetricBuildFailures, Help: "Index builds that failed (the previous generation kept serving).",
	})
	m.buildDuration = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: MetricBuildDuration, Help: "Duration of the last index build attempt.",
	})
	m.lastBuild = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: MetricLastBuild, Help: "When the last index build attempt finished (Unix time).",
	})
	m.buildInfo = newBuildInfo()
	m.reg.MustRegister(m.buildInfo, m.requests, m.latency, m.candidates, m.verified, m.cache, m.errorLimited, m.rateLimited,
		m.builds, m.buildFailures, m.buildDuration, m.lastBuild,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricHeld, Help: "Memory the process holds generations' files in (--tables-in-memory, --stores-in-memory), which the kernel cannot reclaim.",
		}, func() float64 { return float64(disk.HeldBytes()) }))
	// Zero series, so dashboards and alerts see 0 rather than nothing.
	m.cacheHit = m.cache.WithLabelValues("hit")
	m.cacheMiss = m.cache.WithLabelValues("miss")
	return m
}

// Registry is the registry the metrics live in, to add more.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveRequest counts one answered request. route must be a template
// (/v2/search/ or /characters/{character_id}/search/), never a raw path,
// or the number of series grows with the traffic.
func (m *Metrics) ObserveRequest(route, version string, status int, d time.Duration) {
	if m == nil {
		return
	}
	k := seriesKey{route, version, status}
	s, ok := m.series.Load(k)
	if !ok {
		code := strconv.Itoa(status)
		s, _ = m.series.LoadOrStore(k, &requestSeries{
			count:   m.requests.WithLabelValues(route, version, code),
			latency: m.latency.WithLabelValues(route, version, code),
		})
	}
	rs := s.(*requestSeries)
	rs.count.Inc()
	rs.latency.Observe(d.Seconds())
}

// seriesKey names a request's series. There are few (route templates,
// versions and statuses), so they are looked up once and kept: one map
// read per request instead of two label lookups in client_golang, each
// checking, hashing and finding three label values under a lock.
type seriesKey struct {
	route, version string
	status         int
}

type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// SearchStats records what one search did (query.Stats).
func (m *Metrics) SearchStats(candidates, verified int) {
	if m == nil {
		return
	}
	m.candidates.Observe(float64(candidates))
	m.verified.Observe(float64(verified))
}

// RateLimited counts a request of group answered 429.
func (m *Metrics) RateLimited(group string) {
	if m != nil {
		m.rateLimited.WithLabelValues(group).Inc()
	}
}

// RateLimitGroups makes the groups' series of MetricRateLimited exist at
// 0, so dashboards and alerts see 0 rather than nothing.
func (m *Metrics) RateLimitGroups(groups ...string) {
	if m == nil {
		return
	}
	for _, g := range groups {
		m.rateLimited.WithLabelValues(g)
	}
}

// CacheHit counts a search answered from the response cache.
func (m *Metrics) CacheHit() {
	if m != nil {
		m.cacheHit.Inc()
	}
}

// CacheMiss counts a search the cache could not answer.
func (m *Metrics) CacheMiss() {
	if m != nil {
		m.cacheMiss.Inc()
	}
}

// ErrorLimited counts a request refused with 420.
func (m *Metrics) ErrorLimited() {
	if m != nil {
		m.errorLimited.Inc()
	}
}

// ObserveBuild records a build attempt; pass it as indexer.Options.OnBuild.
func (m *Metrics) ObserveBuild(r indexer.BuildResult) {
	if m == nil {
		return
	}
	result := "ok"
	switch {
	case !r.OK():
		result = "failed"
		m.buildFailures.Inc()
	case r.Unchanged:
		result = "unchanged"
	}
	m.builds.WithLabelValues(r.Trigger, result).Inc()
	m.buildDuration.Set(time.Duration(r.Duration).Seconds())
	m.lastBuild.Set(float64(r.Finished.Unix()))
}

// Register adds a collector of another package (a bucket publisher or
// follower) to the registry.
func (m *Metrics) Register(c prometheus.Collector) { m.reg.MustRegister(c) }

// WatchConnections exports the public port's connection counts: those
// accepted, and those its own HTTP path handed to net/http (api/h1).
func (m *Metrics) WatchConnections(counts func() (accepted, handedOver uint64)) {
	if m == nil {
		return
	}
	m.counter(MetricConnections, "Connections the public port accepted.",
		func() float64 { a, _ := counts(); return float64(a) })
	m.counter(MetricHandedOver, "Connections of the public port whose requests were not plain GETs, handed from its own HTTP path to net/http.",
		func() float64 { _, h := counts(); return float64(h) })
}

// WatchBuildYield exports how often and how long index builds paused for
// searches (gds serve --build-yield), read from stats at every scrape.
func (m *Metrics) WatchBuildYield(stats func() (pauses uint64, paused time.Duration)) {
	if m == nil {
		return
	}
	m.counter(MetricYieldPauses, "Pauses index builds took while every search slot was taken or searches waited (--build-yield).",
		func() float64 { p, _ := stats(); return float64(p) })
	m.counter(MetricYieldSeconds, "Time index builds' goroutines spent in those pauses, summed over the goroutines.",
		func() float64 { _, d := stats(); return d.Seconds() })
}

// counter registers a counter read from f at every scrape.
func (m *Metrics) counter(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
}

// WatchRequestLog exports the public port's request log counts: lines
// written, and requests not logged (gds serve --request-log).
func (m *Metrics) WatchRequestLog(counts *httplog.Counts) {
	if m == nil || counts == nil {
		return
	}
	m.counter(MetricLogWritten, "Request log lines the public port wrote.",
		func() float64 { return float64(counts.Written.Load()) })
	m.counter(MetricLogDropped, "Public requests not logged (neither errors nor slow, and outside --request-log's sample).",
		func() float64 { return float64(counts.Dropped.Load()) })
}

// LiveSource reports the live generation (indexer.Manager implements it).
type LiveSource interface {
	Live() *indexer.Meta
	Parts() indexer.Parts
}

// WatchLive exports the live generation's number, creation time and
// documents per category, read from src at every scrape so they are never
// stale, whichever way the generation became live.
func (m *Metrics) WatchLive(src LiveSource) {
	m.reg.MustRegister(&liveCollector{src: src})
}

var (
	descGeneration = prometheus.NewDesc(MetricGeneration,
		"Number of the live index generation (0 when none is live).", nil, nil)
	descCreated = prometheus.NewDesc(MetricGenerationBuilt,
		"When the live index generation was completed (Unix time).", nil, nil)
	descDocuments = prometheus.NewDesc(MetricDocuments,
		"Documents in the live index generation, by search category.", []string{"category"}, nil)
	descAnalysts = prometheus.NewDesc(MetricAnalystsGeneration,
		"Number of the generation answering analysts' queries (the live one once its bleve part is complete; 0 when none can).", nil, nil)
	descPart = prometheus.NewDesc(MetricPartReady,
		"1 when a part of the live generation serves: search (tables and record stores) or bleve (analysts' indexes).", []string{"part"}, nil)
)

// Metrics of the live generation's parts.
const (
	MetricAnalystsGeneration = "gds_index_analysts_generation"
	MetricPartReady          = "gds_index_part_ready"
)

type liveCollector struct{ src LiveSource }

func (c *liveCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descGeneration
	ch <- descCreated
	ch <- descDocuments
	ch <- descAnalysts
	ch <- descPart
}

func (c *liveCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.src.Parts()
	ch <- prometheus.MustNewConstMetric(descAnalysts, prometheus.GaugeValue, float64(p.Analysts))
	ready := func(ok bool) float64 {
		if ok {
			return 1
		}
		return 0
	}
	ch <- prometheus.MustNewConstMetric(descPart, prometheus.GaugeValue, ready(p.Search != 0), "search")
	ch <- prometheus.MustNewConstMetric(descPart, prometheus.GaugeValue, ready(p.Search != 0 && p.Bleve == indexer.BleveLive), "bleve")
	meta := c.src.Live()
	if meta == nil {
		ch <- prometheus.MustNewConstMetric(descGeneration, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descGeneration, prometheus.GaugeValue, float64(meta.ID))
	ch <- prometheus.MustNewConstMetric(descCreated, prometheus.GaugeValue, float64(meta.Created.Unix()))
	for _, cat := range snapshots.Categories {
		if n, ok := meta.Counts[cat]; ok {
			ch <- prometheus.MustNewConstMetric(descDocuments, prometheus.GaugeValue, float64(n), string(cat))
		}
	}
}
