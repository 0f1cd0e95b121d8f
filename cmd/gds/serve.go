package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api"
	"gds/api/admin"
	"gds/api/auth"
	"gds/api/h1"
	"gds/api/httplog"
	"gds/indexer"
	"gds/indexer/fleet"
	"gds/query"
	"gds/query/analyst"
)

func init() {
	register("serve", "serve the public API and the operator port over the live index generation", runServe)
}

// runServe opens the data directory, builds a first generation when none
// is live, and serves until ctx is cancelled (SIGINT, SIGTERM); then it
// stops accepting, lets in-flight requests finish within
// --shutdown-timeout, and closes the indexer.
//
// The operator port listens before the first build, so /healthz answers
// and /readyz says 503 while it runs; the public port opens once a
// generation is live.
func runServe(ctx context.Context, env *Env, args []string) error {
	cfg, err := parseServeConfig(env, args)
	if err != nil {
		return err
	}
	log, closeLog, err := serveLogger(cfg, env)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer closeLog()
	if env.Getenv("GOGC") == "" {
		defer indexer.TuneGC(cfg.GCPercent, env.Getenv("GOMEMLIMIT") == "")()
	}
	if err := admin.CheckExposure(cfg.AdminAddr, cfg.AdminToken); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Keys before the index: a wrong --jwks fails now, not after a build.
	tokens, err := newVerifier(ctx, cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	metrics := admin.NewMetrics()
	metrics.WatchRequestLog(cfg.RequestLog.Counts)
	metrics.RateLimitGroups(slices.Collect(maps.Keys(api.RateLimitGroups()))...)
	fr, err := openPublisher(ctx, cfg.Fleet, log)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	yield := newBuildYield(cfg.BuildYield, metrics)
	mgr, err := openIndexer(cfg, log, fr, metrics, yield)
	if err != nil {
		fr.stop()
		return err
	}
	defer mgr.Close()
	metrics.WatchLive(mgr)
	err = fr.start(ctx, cfg.Fleet, cfg.Data, mgr, metrics, log)
	defer fr.stop() // before the indexer closes
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	srv := &servers{log: log, shutdownTimeout: cfg.HTTP.ShutdownTimeout}
	defer srv.shutdown()
	var publicUp atomic.Bool
	if err := startAdmin(srv, cfg, mgr, fr, metrics, log, &publicUp); err != nil {
		return err
	}

	if live, err := ensureLive(ctx, mgr, cfg, log); !live || err != nil {
		return err
	}
	rebuildMisread(mgr, cfg.Snapshot, cfg.Fleet.Follow != "", log)
	if cfg.Schedule != "" {
		if err := mgr.SetSchedule(cfg.Schedule, cfg.Snapshot); err != nil {
			return fmt.Errorf("serve: --schedule: %w", err)
		}
		log.Info().Str("schedule", cfg.Schedule).Str("snapshot", cfg.Snapshot).Msg("reindex scheduled")
	}

	slots, procs, restoreProcs := applyProcs(&cfg, env.Getenv)
	defer restoreProcs()
	log.Info().Int("search_slots", slots).Int("gomaxprocs", procs).Msg("searches at once")
	publicLog := log.With().Str("listener", "public").Logger()
	public := publicHandler(publicDeps(cfg, mgr, tokens, metrics, yield, publicLog))
	// publicUp is set before "listening" is logged: an operator (or a
	// test) who sees that line finds /readyz answering 200.
	if err := srv.listen("public", cfg.Addr, publicServer(cfg, public, metrics, publicLog), func() { publicUp.Store(true) }); err != nil {
		return err
	}

	select {
	case <-ctx.Done():
		log.Info().Msg("signal received; shutting down")
		return srv.shutdown()
	case err := <-srv.failed:
		return fmt.Errorf("serve: %w", err)
	}
}

// openIndexer opens the data directory with the flags' indexer options;
// each build it makes is published through fr and observed in metrics.
func openIndexer(cfg serveConfig, log zerolog.Logger, fr *fleetRun, metrics *admin.Metrics, yield *api.BuildYield) (*indexer.Manager, error) {
	buildChild, err := newBuildChild(cfg, log)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	mgr, err := indexer.Open(indexer.Options{
		DataDir:            cfg.Data,
		Logger:             log.With().Str("component", "indexer").Logger(),
		OnBuild:            fr.onBuild(metrics.ObserveBuild),
		BatchSize:          cfg.BleveBatch,
		BleveCharacters:    cfg.BleveCharacters,
		AnalystIdle:        cfg.AnalystIdle,
		TablesInMemory:     cfg.TablesInMemory == holdAlways,
		TablesInMemoryAuto: cfg.TablesInMemory == holdAuto,
		StoresInMemory:     cfg.StoresInMemory == holdAlways,
		StoresInMemoryAuto: cfg.StoresInMemory == holdAuto,
		FetchSnapshot:      fetchSnapshot(cfg.Data),
		Pacer:              yield,
		BuildChild:         buildChild,
	})
	if err != nil {
		return nil, fmt.Errorf("serve: opening data directory %s: %w", cfg.Data, err)
	}
	return mgr, nil
}

// publicServer is the public port's server: net/http, or the fast HTTP/1
// path (--fast-http) handing what it does not speak to net/http. The
// public port's answers of a few kilobytes leave in one write
// (httplog.CoalesceWrites); the operator port streams exports and
// profiles, and keeps net/http's writes as they are.
func publicServer(cfg serveConfig, public *api.Handler, metrics *admin.Metrics, log zerolog.Logger) server {
	netHTTP := onJSONErrors(newHTTPServer(public, cfg.HTTP, log), public.Rejected, httplog.CoalesceWrites)
	if !cfg.HTTP.Fast {
		return netHTTP
	}
	fast := newFastServer(public, cfg.HTTP, log, netHTTP)
	metrics.WatchConnections(fast.Connections)
	return fast
}

// newBuildYield is --build-yield: the pacer that makes index builds give
// way to the public port's searches (nil when off), with its metrics.
func newBuildYield(bound time.Duration, metrics *admin.Metrics) *api.BuildYield {
	var y *api.BuildYield
	if bound > 0 {
		y = api.NewBuildYield(bound)
	}
	metrics.WatchBuildYield(y.Stats)
	return y
}

// publicHandler is the one place the public API is constructed.
func publicHandler(d api.Deps) *api.Handler { return api.New(d) }

// newVerifier verifies tokens with the --jwks keys, or with the data
// directory's local key (the one gds token signs with) when none is given.
func newVerifier(ctx context.Context, cfg serveConfig) (*auth.Verifier, error) {
	var keys auth.Keys
	if cfg.JWKS == "" {
		key, err := auth.EnsureLocalKey(cfg.Data)
		if err != nil {
			return nil, err
		}
		keys = key.KeySet()
	} else {
		ks, err := auth.OpenKeys(ctx, cfg.JWKS, auth.RemoteOptions{})
		if err != nil {
			return nil, fmt.Errorf("--jwks %s: %w", cfg.JWKS, err)
		}
		keys = ks
	}
	ac := auth.LocalConfig()
	if cfg.ClientID != "" {
		ac = auth.EVEConfig(cfg.ClientID)
	}
	ac.MaxLifetime = cfg.TokenMaxLifetime
	return auth.NewVerifier(keys, ac)
}

// server is what serves a listener: net/http's, or h1's in front of it.
type server interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
	Close() error
}

// wrappedServer serves net/http on its listener wrapped.
type wrappedServer struct {
	*http.Server
	wrap func(net.Listener) net.Listener
}

func (w *wrappedServer) Serve(ln net.Listener) error { return w.Server.Serve(w.wrap(ln)) }

// onJSONErrors serves s on listeners wrapped by wrap (innermost first)
// and then so that the answers net/http gives by itself leave as JSON;
// reject, when set, charges them to the client's error budget.
func onJSONErrors(s *http.Server, reject httplog.RejectFunc, wrap ...func(net.Listener) net.Listener) *wrappedServer {
	return &wrappedServer{Server: s, wrap: func(ln net.Listener) net.Listener {
		for _, w := range wrap {
			ln = w(ln)
		}
		return httplog.JSONErrors(ln, reject)
	}}
}

// newFastServer answers plain GET requests with h1 and hands every other
// connection to fallback (docs/operations.md, "The public port's HTTP").
func newFastServer(h http.Handler, c httpConfig, log zerolog.Logger, fallback *wrappedServer) *h1.Server {
	return &h1.Server{
		Handler:           h,
		Fallback:          fallback.Server,
		WrapFallback:      fallback.wrap,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		IdleTimeout:       c.IdleTimeout,
		WriteTimeout:      c.WriteTimeout,
		Logger:            log,
	}
}

// servers runs the HTTP listeners and stops them together.
type servers struct {
	log             zerolog.Logger
	shutdownTimeout time.Duration
	failed          chan error // a listener that stopped on its own

	mu   sync.Mutex
	list []server
	once sync.Once
	err  error
}

// listen binds addr now, so a taken port fails the start rather than a
// goroutine later, and serves s on it in the background. up, when set,
// runs once the socket accepts connections and before "listening" is
// logged.
func (sv *servers) listen(name, addr string, s server, up func()) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %s listener: %w", name, err)
	}
	sv.mu.Lock()
	if sv.failed == nil {
		sv.failed = make(chan error, 2)
	}
	sv.list = append(sv.list, s)
	sv.mu.Unlock()
	if up != nil {
		up()
	}
	sv.log.Info().Str("listener", name).Str("addr", ln.Addr().String()).Msg("listening")
	go func() {
		if err := s.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			sv.failed <- fmt.Errorf("%s listener: %w", name, err)
		}
	}()
	return nil
}

// shutdown stops accepting on every listener and waits up to the shutdown
// timeout for in-flight requests; connections still busy then are cut.
func (sv *servers) shutdown() error {
	sv.once.Do(func() {
		sv.mu.Lock()
		list := sv.list
		sv.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), sv.shutdownTimeout)
		defer cancel()
		var wg sync.WaitGroup
		errs := make([]error, len(list))
		for i, s := range list {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Shutdown(ctx); err != nil {
					errs[i] = err
					_ = s.Close()
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			sv.err = fmt.Errorf("serve: shutdown: requests still running after %v were cut: %w", sv.shutdownTimeout, err)
			sv.log.Error().Err(err).Msg("shutdown timed out")
			return
		}
		sv.log.Info().Msg("listeners closed")
	})
	return sv.err
}

// rebuildMisread starts a full build when the live generation was written
// by a gds that folds names otherwise (or a newer analysts' layout): its
// searches would miss names. It keeps serving until the build replaces it,
// as the best there is. A replica builds nothing: it waits for the bucket.
func rebuildMisread(mgr *indexer.Manager, snapshot string, replica bool, log zerolog.Logger) {
	err := mgr.LiveMisread()
	if err == nil {
		return
	}
	live := mgr.Live()
	if replica {
		log.Warn().Err(err).Uint64("generation", live.ID).
			Msg("the live generation was written by another gds version; it serves until the bucket has one this version reads")
		return
	}
	snap := cmp.Or(snapshot, live.Snapshot)
	id, _ := mgr.Start(indexer.BuildRequest{Snapshot: snap, Full: true, Trigger: "start"})
	log.Warn().Err(err).Uint64("generation", live.ID).Str("snapshot", snap).Str("build_id", id).
		Msg("the live generation was written by another gds version; it serves until this build replaces it")
}

// startAdmin starts the operator port: status, reindex, metrics, the
// analysts' queries; /readyz answers 200 once publicUp is set.
func startAdmin(srv *servers, cfg serveConfig, mgr *indexer.Manager, fr *fleetRun, metrics *admin.Metrics, log zerolog.Logger, publicUp *atomic.Bool) error {
	adminLog := log.With().Str("listener", "admin").Logger()
	build := currentBuild()
	metrics.SetBuild(build)
	adminOpts := admin.Options{
		Build:   &build,
		Indexer: mgr, Analysts: analyst.New(mgr), Snapshot: cfg.Snapshot, Token: cfg.AdminToken, Metrics: metrics,
		Logger: adminLog, MaxBodyBytes: cfg.HTTP.MaxBodyBytes, Hosts: cfg.AdminHosts,
		AnalystTimeout: max(cfg.AnalystTimeout, -1), AnalystConcurrency: cfg.AnalystConcurrency,
		Ready: func() error {
			if !publicUp.Load() {
				return errors.New("The public listener is not up yet")
			}
			return nil
		},
	}
	if fr.active() {
		adminOpts.Fleet = fr.status
	}
	if cfg.Fleet.Follow != "" {
		adminOpts.ReindexRefused = "This server is a replica (--follow): it builds nothing and serves the generations " +
			"published to its bucket. Reindex on the indexer that publishes them."
	}
	adminHandler := admin.New(adminOpts)
	if err := srv.listen("admin", cfg.AdminAddr, onJSONErrors(newHTTPServer(adminHandler, cfg.HTTP, adminLog), nil), nil); err != nil {
		return err
	}
	return nil
}

// ensureLive makes sure a generation is live before the public port opens:
// a replica waits for the first from its bucket, an indexer builds one from
// --snapshot. live is false when ctx ended first (not an error).
func ensureLive(ctx context.Context, mgr *indexer.Manager, cfg serveConfig, log zerolog.Logger) (live bool, err error) {
	switch {
	case mgr.Live() == nil && cfg.Fleet.Follow != "":
		log.Info().Str("bucket", fleet.Redact(cfg.Fleet.Follow)).Msg("no generation is live; waiting for the first from the bucket")
		if !waitForLive(ctx, mgr) {
			log.Info().Msg("interrupted while waiting for the first generation")
			return false, nil
		}
	case mgr.Live() == nil:
		if cfg.Snapshot == "" {
			return false, fmt.Errorf("serve: no index generation in %s yet: give --snapshot to build one", cfg.Data)
		}
		log.Info().Str("snapshot", cfg.Snapshot).Msg("no generation is live; building one before serving")
		if _, err := mgr.Build(ctx, indexer.BuildRequest{Snapshot: cfg.Snapshot, Trigger: "start"}); err != nil {
			if ctx.Err() != nil {
				log.Info().Msg("interrupted during the initial build")
				return false, nil
			}
			return false, fmt.Errorf("serve: initial build from %s failed and no generation is live: %w", cfg.Snapshot, err)
		}
	}
	return true, nil
}

// publicDeps is what the public port's handler is built from.
func publicDeps(cfg serveConfig, mgr *indexer.Manager, tokens *auth.Verifier, metrics *admin.Metrics, yield *api.BuildYield, publicLog zerolog.Logger) api.Deps {
	return api.Deps{
		Views:      query.New(mgr),
		Tokens:     tokens,
		Now:        time.Now,
		Logger:     publicLog,
		ReleaseDay: cfg.ReleaseDay,
		DevEnabled: cfg.Dev,
		Metrics:    metrics,
		Middleware: []gin.HandlerFunc{
			httplog.Logger(httplog.Options{Logger: publicLog, Labels: api.Labels, ClientIP: cfg.TrustedProxies.r.IP, Keep: cfg.RequestLog}),
		},
		Limits: api.Limits{
			MaxConcurrentSearches: cfg.MaxConcurrentSearches,
			SearchQueueWait:       cfg.SearchQueueWait,
			SearchBurstWait:       cfg.SearchBurstWait,
			ErrorLimit:            cfg.ErrorLimit,
			CacheBytes:            cfg.CacheBytes,
			RateLimits:            cfg.RateLimits.spec.Groups,
			RateLimitsOff:         cfg.RateLimits.spec.Off,
			MaxBodyBytes:          cfg.HTTP.MaxBodyBytes,
			MaxHeaderBytes:        cfg.HTTP.MaxHeaderBytes,
		},
		ClientIP:   cfg.TrustedProxies.r,
		Health:     func() api.Health { return healthOf(mgr.Status()) },
		BuildYield: yield,
	}
}

// serveLogger is the server's logger. JSON lines are written in batches
// (httplog.LogBuffer: warnings and errors at once, a request's info line
// within 100 ms), not one write per request; a terminal gets every line as
// it happens. closeLog flushes what is buffered.
func serveLogger(cfg serveConfig, env *Env) (log zerolog.Logger, closeLog func(), err error) {
	logOut, closeLog := env.Stderr, func() {}
	if cfg.Log.Format == "json" || (cfg.Log.Format != "pretty" && !isTerminal(env.Stderr)) {
		lb := httplog.NewLogBuffer(env.Stderr, httplog.FlushEvery)
		logOut, closeLog = lb, func() { lb.Close() }
	}
	log, err = newLogger(cfg.Log, logOut)
	if err != nil {
		closeLog()
		return log, nil, err
	}
	return log, closeLog, nil
}

// healthOf is what GET /meta/status reports of the indexer's status.
func healthOf(st indexer.Status) api.Health {
	return api.Health{
		Live:            st.Live != nil,
		AnalystsPending: st.Live != nil && st.Parts.Bleve != "" && st.Parts.Bleve != indexer.BleveLive,
		LastBuildFailed: st.LastBuild != nil && !st.LastBuild.OK(),
		Building:        st.Building != nil,
	}
}
