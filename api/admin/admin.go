// Package admin is the operator listener: Prometheus metrics, liveness and
// readiness probes, indexer status, reindexing and the analysts' bleve
// query. It is a separate handler from the public API, served on its own
// address (loopback by default) and guarded by a bearer token whenever one
// is configured.
package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/httplog"
	"gds/indexer"
	"gds/query/analyst"
	"gds/snapshots"
)

// Indexer is what the operator handler needs of indexer.Manager.
type Indexer interface {
	Status() indexer.Status
	Start(req indexer.BuildRequest) (id string, coalesced bool)
	Acquire() *indexer.Generation
}

// Options configure the operator handler.
type Options struct {
	// Indexer is the data directory's manager.
	Indexer Indexer
	// Snapshot is what POST /admin/reindex builds when the body names none.
	Snapshot string
	// Token, when not empty, must be sent as "Authorization: Bearer
	// <token>" on every route but the probes.
	Token string
	// Metrics is served on /metrics; nil serves an empty registry.
	Metrics *Metrics
	// Logger receives one line per request.
	Logger zerolog.Logger
	// MaxBodyBytes bounds request bodies; default 64 KiB.
	MaxBodyBytes int64
	// Now is the clock of the status report; nil means time.Now.
	Now func() time.Time
	// Analysts answers /admin/query and the console; nil answers 503.
	Analysts *analyst.Engine
	// Hosts are further names (name or name:port) the port may be reached
	// by; its IP address and, on loopback, localhost always work. Other
	// Host headers are refused, as are cross-origin requests.
	Hosts []string
	// Ready, when set, is a further condition of /readyz besides a live
	// generation (gds serve: the public listener is up), so a load
	// balancer never routes to a port that is not accepting yet.
	Ready func() error
	// ReindexRefused, when set, is why this server builds nothing (a
	// replica following a bucket): POST /admin/reindex answers 409 with it.
	ReindexRefused string
	// Fleet, when set, reports publishing or following a bucket under
	// "fleet" in /admin/status.
	Fleet func() any
	// AnalystTimeout bounds each analysts' query (and export): past it
	// the query stops and gets 504. 0: DefaultAnalystTimeout (10s);
	// negative: no bound.
	AnalystTimeout time.Duration
	// AnalystConcurrency is how many analysts' queries run at once (0:
	// DefaultAnalystConcurrency, 1); more wait up to 2 s for a slot, then
	// get 503 with Retry-After.
	AnalystConcurrency int
	// Build, when set, is reported under "build" in /admin/status.
	Build *Build
}

// New returns the operator handler.
func New(o Options) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 64 << 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	h := &handler{o: o, bounds: newAnalystBounds(o)}
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.Use(httplog.Logger(httplog.Options{Logger: o.Logger}), httplog.Recover(o.Logger))
	// Probes stay open: they reveal nothing, and load balancers rarely send
	// credentials or the Host an operator would.
	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
	guarded := e.Group("/", guard(o.Hosts), RequireToken(o.Token), httplog.BodyLimit(o.MaxBodyBytes))
	guarded.GET("/metrics", gin.WrapH(o.Metrics.Handler()))
	guarded.GET("/admin/status", h.status)
	guarded.POST("/admin/reindex", h.reindex)
	guarded.GET("/admin/query", h.query)
	guarded.GET("/admin/fields", h.fields)
	h.console(e)
	// Go's profiler, for operators chasing a slow or hungry server
	// (go tool pprof http://ADMIN/debug/pprof/profile?seconds=10).
	guarded.GET("/debug/pprof/", gin.WrapF(pprof.Index))
	guarded.GET("/debug/pprof/profile", gin.WrapF(pprof.Profile))
	guarded.GET("/debug/pprof/trace", gin.WrapF(pprof.Trace))
	guarded.GET("/debug/pprof/symbol", gin.WrapF(pprof.Symbol))
	guarded.GET("/debug/pprof/:name", func(c *gin.Context) { pprof.Handler(c.Param("name")).ServeHTTP(c.Writer, c.Request) })
	e.NoRoute(func(c *gin.Context) { writeError(c, http.StatusNotFound, "Not found") })
	e.NoMethod(func(c *gin.Context) { writeError(c, http.StatusMethodNotAllowed, "Method not allowed") })
	return e
}

type handler struct {
	o      Options
	bounds *analystBounds
}

// writeError is the handler's one error writer, in the API's shape.
func writeError(c *gin.Context, status int, msg string) {
	c.AbortWithStatusJSON(status, gin.H{"error": msg})
}

func (h *handler) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (h *handler) readyz(c *gin.Context) {
	g := h.o.Indexer.Acquire()
	if g == nil {
		writeError(c, http.StatusServiceUnavailable, "No index generation is live yet")
		return
	}
	defer g.Release()
	if h.o.Ready != nil {
		if err := h.o.Ready(); err != nil {
			writeError(c, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "generation": g.Meta.ID})
}

// StatusReport is the body of GET /admin/status: the indexer's status and
// the configuration an operator needs to read it.
type StatusReport struct {
	indexer.Status
	// Snapshot is what a reindex without a body builds.
	Snapshot string    `json:"snapshot"`
	Now      time.Time `json:"now"`
	// Fleet is the publisher's or replica's view of its bucket.
	Fleet any `json:"fleet,omitempty"`
	// Build is the running binary's version, revision and formats.
	Build *Build `json:"build,omitempty"`
}

func (h *handler) status(c *gin.Context) {
	r := StatusReport{Status: h.o.Indexer.Status(), Snapshot: h.o.Snapshot, Now: h.o.Now().UTC(), Build: h.o.Build}
	if h.o.Fleet != nil {
		r.Fleet = h.o.Fleet()
	}
	c.JSON(http.StatusOK, r)
}

// ReindexRequest is the optional body of POST /admin/reindex.
type ReindexRequest struct {
	// Snapshot to build from; empty means the configured one.
	Snapshot string `json:"snapshot"`
	// Full rebuilds every bleve index even when few records changed.
	Full bool `json:"full"`
}

// ReindexResponse answers POST /admin/reindex (202 Accepted): the build
// runs in the background; follow it on /admin/status.
type ReindexResponse struct {
	BuildID   string `json:"build_id"`
	Coalesced bool   `json:"coalesced"`
	Snapshot  string `json:"snapshot"`
}

func (h *handler) reindex(c *gin.Context) {
	if h.o.ReindexRefused != "" {
		writeError(c, http.StatusConflict, h.o.ReindexRefused)
		return
	}
	var req ReindexRequest
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	switch err := dec.Decode(&req); {
	case errors.Is(err, io.EOF):
		// No body: the defaults.
	case httplog.TooLarge(err):
		writeError(c, http.StatusRequestEntityTooLarge, "Request body is too large")
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Not the read error itself: it names the sockets.
		writeError(c, http.StatusRequestTimeout, "Request body: not received in time")
		return
	case err != nil:
		writeError(c, http.StatusBadRequest, fmt.Sprintf(`Body must be JSON {"snapshot": "DIR", "full": false}: %v`, err))
		return
	}
	if req.Snapshot == "" {
		req.Snapshot = h.o.Snapshot
	}
	if req.Snapshot == "" {
		writeError(c, http.StatusBadRequest, `No snapshot configured; send {"snapshot": "DIR"}`)
		return
	}
	// Catch a mistyped directory now rather than as a failed build later;
	// the build itself verifies the snapshot's contents (and fetches one
	// named by a bucket URL).
	if _, err := os.Stat(filepath.Join(req.Snapshot, snapshots.ManifestName)); err != nil && !strings.Contains(req.Snapshot, "://") {
		writeError(c, http.StatusBadRequest, fmt.Sprintf("Snapshot %s has no readable manifest: %v", req.Snapshot, err))
		return
	}
	id, coalesced := h.o.Indexer.Start(indexer.BuildRequest{Snapshot: req.Snapshot, Full: req.Full, Trigger: "admin"})
	c.JSON(http.StatusAccepted, ReindexResponse{BuildID: id, Coalesced: coalesced, Snapshot: req.Snapshot})
}

// RequireToken returns middleware admitting only requests that carry
// "Authorization: Bearer <token>"; an empty token admits everyone.
func RequireToken(token string) gin.HandlerFunc {
	if token == "" {
		return func(c *gin.Context) { c.Next() }
	}
	// Comparing digests keeps the comparison constant-time in the length
	// of the token too.
	want := sha256.Sum256([]byte(token))
	return func(c *gin.Context) {
		scheme, got, ok := strings.Cut(c.GetHeader("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			c.Header("WWW-Authenticate", `Bearer realm="gds-admin"`)
			writeError(c, http.StatusUnauthorized, "Admin token required: send Authorization: Bearer <token>")
			return
		}
		c.Next()
	}
}

// CheckExposure refuses to serve the operator port on addr without a
// token unless addr is loopback only: the port can rebuild indexes and
// run arbitrary queries.
func CheckExposure(addr, token string) error {
	if token != "" || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("admin address %s is reachable beyond this machine: set an admin token (--admin-token or GDS_ADMIN_TOKEN) or bind it to 127.0.0.1", addr)
}

// IsLoopback reports whether a listen address (host:port) accepts
// connections from this machine only. An empty host listens everywhere.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
