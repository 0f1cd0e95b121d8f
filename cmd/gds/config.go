package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"

	"gds/api"
	"gds/api/admin"
	"gds/api/auth"
	"gds/api/httplog"
	"gds/indexer"
	"gds/indexer/fleet"
)

// serveConfig is everything gds serve is told, from flags or GDS_* env.
type serveConfig struct {
	Snapshot   string
	Data       string
	Addr       string
	AdminAddr  string
	Schedule   string
	ReleaseDay time.Time // zero: the API's default
	JWKS       string
	ClientID   string
	AdminToken string
	AdminHosts []string
	Dev        bool
	// TokenMaxLifetime refuses tokens valid for longer.
	TokenMaxLifetime time.Duration

	Log logConfig

	MaxConcurrentSearches int
	SpareProcs            int
	SearchQueueWait       time.Duration
	SearchBurstWait       time.Duration
	BuildYield            time.Duration
	BuildProcess          bool
	ErrorLimit            int
	CacheBytes            int64
	BleveBatch            int
	BleveCharacters       bool
	AnalystIdle           time.Duration
	AnalystTimeout        time.Duration
	AnalystConcurrency    int
	RequestLog            httplog.Keep
	TablesInMemory        holdFlag
	StoresInMemory        holdFlag
	GCPercent             int
	RateLimits            rateLimitFlag
	TrustedProxies        proxiesFlag
	HTTP                  httpConfig

	Fleet fleetConfig
}

// httpConfig bounds what one connection may cost the server.
type httpConfig struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	ShutdownTimeout   time.Duration
	MaxHeaderBytes    int
	MaxBodyBytes      int64
	Fast              bool // the public port's plain GETs answered by h1
}

// logConfig says how the process logs.
type logConfig struct {
	Format string // json, pretty or auto
	Level  string
}

// addAnalystTimeoutFlag declares --analyst-timeout (gds serve, gds query).
func addAnalystTimeoutFlag(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "analyst-timeout", admin.DefaultAnalystTimeout,
		"stop an analysts' query (or export) running longer than this: 504 on the operator port, an error from gds query (0 or negative: no limit)")
}

// addLogFlags declares --log-format and --log-level on fs.
func addLogFlags(fs *flag.FlagSet, c *logConfig) {
	fs.StringVar(&c.Format, "log-format", "auto", "json, pretty, or auto (pretty when stderr is a terminal)")
	fs.StringVar(&c.Level, "log-level", "info", "debug, info, warn or error")
}

const serveSynopsis = "--snapshot DIR|URL --data DIR [--publish URL | --follow URL] [--addr 127.0.0.1:8080] [--admin-addr 127.0.0.1:9090] " +
	"[--schedule CRON] [--release-day YYYY-MM-DD] [--jwks URL|FILE] [--admin-token-file FILE] [flags]"

// parseServeConfig reads gds serve's flags and environment and checks
// what can be checked before anything is opened.
func parseServeConfig(env *Env, args []string) (serveConfig, error) {
	var c serveConfig
	var releaseDay string
	fs := newFlags(env, "serve", serveSynopsis)
	fs.StringVar(&c.Snapshot, "snapshot", "", "snapshot directory to build from on start (when no generation is live), on --schedule and on POST /admin/reindex")
	fs.StringVar(&c.Data, "data", "", "data directory: index generations and the local signing key")
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "address of the public API")
	fs.StringVar(&c.AdminAddr, "admin-addr", "127.0.0.1:9090", "address of the operator port (/metrics, /healthz, /readyz, /admin/*); beyond loopback it needs --admin-token")
	fs.StringVar(&c.Schedule, "schedule", "", "cron schedule (UTC) to rebuild from --snapshot, e.g. '0 11 * * *' or '@every 6h'")
	fs.StringVar(&releaseDay, "release-day", "", "release day of the new structures system, YYYY-MM-DD (default: the API's, in the past)")
	fs.StringVar(&c.JWKS, "jwks", "", "JWKS to verify tokens with, an https URL or a file (default: the data directory's local key, as gds token uses)")
	fs.StringVar(&c.ClientID, "client-id", "", "EVE SSO client ID: accept EVE SSO tokens for it (default: accept tokens of gds token)")
	fs.StringVar(&c.AdminToken, "admin-token", "", "bearer token the operator port requires (required when --admin-addr is not loopback); "+
		"a flag shows in ps: prefer GDS_ADMIN_TOKEN or --admin-token-file")
	var adminTokenFile, adminHosts string
	fs.StringVar(&adminTokenFile, "admin-token-file", "", "file holding the operator port's bearer token (surrounding white space ignored)")
	fs.StringVar(&adminHosts, "admin-hosts", "", "comma-separated further names (name or name:port) the operator port answers to; "+
		"its IP address and localhost always work, other Host headers get 403")
	fs.DurationVar(&c.TokenMaxLifetime, "token-max-lifetime", auth.DefaultMaxLifetime, "refuse tokens valid for longer than this (from their iat, or from now)")
	fs.BoolVar(&c.Dev, "dev", false, "serve route versions in the dev phase under /dev/ (the spec's dev versions are disabled previews)")
	addLogFlags(fs, &c.Log)
	fs.IntVar(&c.MaxConcurrentSearches, "max-concurrent-searches", 0, "searches run at once; more wait up to --search-burst-wait (--search-queue-wait once the queue stands), then get 503 (0: one per CPU, or per GOMAXPROCS when set)")
	fs.IntVar(&c.SpareProcs, "spare-procs", 0, "Go scheduler threads (GOMAXPROCS) beyond the search slots, to read requests while every slot searches "+
		"(0: 1; negative: none; a GOMAXPROCS variable wins)")
	fs.DurationVar(&c.SearchQueueWait, "search-queue-wait", 0, "how long a search waits for a free slot before 503 once searches have queued for longer than --search-burst-wait on end (0: 50ms; negative: no wait, not even in a burst)")
	fs.DurationVar(&c.SearchBurstWait, "search-burst-wait", 0, "how long a search waits for a free slot before 503 when the queue emptied within the last --search-burst-wait (0: 500ms; never less than --search-queue-wait)")
	fs.DurationVar(&c.BuildYield, "build-yield", api.DefaultBuildYield, "longest pause of an index build running in the server while every search slot is taken "+
		"or searches wait; after a pause builds run as long again unpaused, so they keep at least half the time (0 or negative: builds never pause)")
	fs.BoolVar(&c.BuildProcess, "build-process", false, "build new generations (--schedule, POST /admin/reindex) in a child process, gds index at the lowest CPU priority (nice 19): "+
		"the kernel runs searches first and the build's memory is not the server's; the first build, with no generation live, runs in the server (recommended in production)")
	fs.IntVar(&c.ErrorLimit, "error-limit", 0, "error answers a client may get per minute before 420 (0: 100, as ESI)")
	fs.Int64Var(&c.CacheBytes, "cache-bytes", 0, "size of the search response cache (0: 64 MiB; negative disables it)")
	addBleveBatchFlag(fs, &c.BleveBatch, &c.BleveCharacters)
	addRateLimitFlags(fs, &c.RateLimits, &c.TrustedProxies)
	c.TablesInMemory = holdAuto
	fs.Var(&c.TablesInMemory, "tables-in-memory", "true, false or auto: read the live generation's name tables into memory, in huge pages where the system has them, "+
		"instead of mapping their files (false: mapped); contains searches are faster, the memory the same but not the kernel's to reclaim; "+
		"true holds their typo indexes too, false maps those unpopulated; auto (the default): the tables, then the stores (--stores-in-memory auto), "+
		"then the typo indexes, each while it fits what those before it left of a seventh of the memory the process may use (the machine's, or its cgroup's limit)")
	c.StoresInMemory = holdAuto
	fs.Var(&c.StoresInMemory, "stores-in-memory", "true, false or auto: read what record lookups read (the live generation's record stores but their hashes) into memory, "+
		"in huge pages where the system has them, instead of mapping their files: a lookup never waits for the disk, for about 33 bytes a character of memory the kernel cannot reclaim; "+
		"auto (the default): when the stores fit what the tables held in memory left of a seventh of the memory the process may use (the machine's, or its cgroup's limit), else mapped")
	fs.IntVar(&c.GCPercent, "gc-percent", indexer.DefaultServeGCPercent, "Go's GOGC for the server: its heap holds little (the tables and stores are outside it), "+
		"so collecting less often saves CPU on every request; a soft memory limit of 2.5 GiB (at most half the machine's) bounds it while a build runs in the server "+
		"(100 is Go's default; a GOGC variable in the environment wins, a GOMEMLIMIT one replaces the soft limit)")
	fs.DurationVar(&c.AnalystIdle, "analyst-idle", 10*time.Minute, "close the bleve indexes analysts' queries opened after this long without one (negative: keep them open)")
	addAnalystTimeoutFlag(fs, &c.AnalystTimeout)
	var requestLog string
	var requestLogSlow time.Duration
	fs.StringVar(&requestLog, "request-log", "1/100", "which public requests get a log line: all, errors (4xx and 5xx but 420 and 429, and slow ones) "+
		"or 1/N (those, and one in N of the rest)")
	fs.DurationVar(&requestLogSlow, "request-log-slow", 50*time.Millisecond, "a public request answered this slowly is always logged (0: none)")
	fs.IntVar(&c.AnalystConcurrency, "analyst-concurrency", admin.DefaultAnalystConcurrency,
		"analysts' queries (GET /admin/query, the console) run at once; more wait up to 2s for a slot, then get 503 with Retry-After")
	addHTTPFlags(fs, &c.HTTP)
	addPublishFlags(fs, &c.Fleet)
	fs.StringVar(&c.Fleet.Follow, "follow", "", "serve as a replica of the generations published to this bucket URL (no --snapshot, no builds); see docs/fleet.md")
	fs.DurationVar(&c.Fleet.FollowInterval, "follow-interval", fleet.DefaultInterval, "how often a replica reads the bucket's pointer")
	err := parseOnlyFlags(env, fs, args)
	if err != nil {
		return c, err
	}
	if c.RequestLog, err = httplog.ParseKeep(requestLog, requestLogSlow); err != nil {
		return c, fmt.Errorf("serve: %w", err)
	}
	c.RequestLog.Counts = &httplog.Counts{}
	if err := requireFlags(fs, "data"); err != nil {
		return c, err
	}
	if adminTokenFile != "" {
		if c.AdminToken != "" {
			return c, errors.New("serve: give --admin-token or --admin-token-file, not both")
		}
		if c.AdminToken, err = readTokenFile(adminTokenFile); err != nil {
			return c, fmt.Errorf("serve: --admin-token-file: %w", err)
		}
	}
	for h := range strings.SplitSeq(adminHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.AdminHosts = append(c.AdminHosts, h)
		}
	}
	if c.Addr == "" || c.AdminAddr == "" {
		return c, errors.New("serve: --addr and --admin-addr must not be empty")
	}
	if releaseDay != "" {
		if c.ReleaseDay, err = time.Parse(time.DateOnly, releaseDay); err != nil {
			return c, fmt.Errorf("serve: --release-day %q: want YYYY-MM-DD", releaseDay)
		}
	}
	if err := c.check(); err != nil {
		return c, fmt.Errorf("serve: %w", err)
	}
	return c, nil
}

// addHTTPFlags adds the flags of the public port's HTTP limits to fs.
func addHTTPFlags(fs *flag.FlagSet, h *httpConfig) {
	fs.DurationVar(&h.ReadHeaderTimeout, "read-header-timeout", 5*time.Second, "time to read a request's headers")
	fs.DurationVar(&h.ReadTimeout, "read-timeout", 10*time.Second, "time to read a whole request")
	fs.DurationVar(&h.WriteTimeout, "write-timeout", 30*time.Second, "time to write a response")
	fs.DurationVar(&h.IdleTimeout, "idle-timeout", 2*time.Minute, "keep-alive connections idle longer are closed")
	fs.DurationVar(&h.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "on SIGINT/SIGTERM, time in-flight requests get to finish")
	fs.IntVar(&h.MaxHeaderBytes, "max-header-bytes", 64<<10, "largest request header block")
	fs.Int64Var(&h.MaxBodyBytes, "max-body-bytes", 64<<10, "largest request body")
	fs.BoolVar(&h.Fast, "fast-http", true, "answer the public port's plain GET requests with gds's own HTTP/1.1 path, handing every other connection to "+
		"net/http (false: net/http alone)")
}

// check refuses the flag values serve cannot run with that parsing alone
// lets through.
func (c *serveConfig) check() error {
	if c.GCPercent < 1 {
		return fmt.Errorf("--gc-percent %d: want 1 or more (GOGC=off in the environment turns the collector off)", c.GCPercent)
	}
	if c.Schedule != "" {
		if c.Snapshot == "" {
			return errors.New("--schedule needs --snapshot to rebuild from")
		}
		if _, err := indexer.ParseSchedule(c.Schedule); err != nil {
			return fmt.Errorf("--schedule %q: %w", c.Schedule, err)
		}
	}
	if err := c.Fleet.check(c.Snapshot, c.Schedule); err != nil {
		return err
	}
	if c.TokenMaxLifetime <= 0 {
		return errors.New("--token-max-lifetime must be positive")
	}
	if c.AnalystIdle == 0 {
		return errors.New("--analyst-idle must not be 0 (negative keeps the indexes open)")
	}
	if err := checkBleveBatch(c.BleveBatch); err != nil {
		return err
	}
	h := c.HTTP
	if h.ReadHeaderTimeout <= 0 || h.ReadTimeout <= 0 || h.WriteTimeout <= 0 || h.IdleTimeout <= 0 || h.ShutdownTimeout <= 0 {
		return errors.New("timeouts must be positive")
	}
	if h.MaxHeaderBytes < 4<<10 || h.MaxBodyBytes < 1 {
		return errors.New("--max-header-bytes must be at least 4096 and --max-body-bytes positive")
	}
	return nil
}

// readTokenFile reads a secret from a file: the whole content, trimmed,
// and not empty.
func readTokenFile(name string) (string, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" {
		return "", fmt.Errorf("%s is empty", name)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s holds more than one line or word", name)
	}
	return tok, nil
}

// addBleveBatchFlag declares --bleve-batch on fs, and --bleve-characters.
func addBleveBatchFlag(fs *flag.FlagSet, n *int, chars *bool) {
	fs.IntVar(n, "bleve-batch", indexer.DefaultBatchSize, "documents per bleve segment in a full build: larger makes analysts' prefix and wildcard "+
		"queries faster and the build slower (50000 over 10M names: name:kari* 7x faster, the build a sixth slower)")
	fs.BoolVar(chars, "bleve-characters", false, "index characters in bleve shards too, for bleve's own scores in analysts' queries "+
		"(by default the name tables and value columns answer them: at 10M names the full build is four times shorter and the generation two fifths smaller)")
}

// checkBleveBatch checks a --bleve-batch value.
func checkBleveBatch(n int) error {
	if n < 1 || n > indexer.MaxBatchSize {
		return fmt.Errorf("--bleve-batch %d: want 1 to %d", n, indexer.MaxBatchSize)
	}
	return nil
}

func init() {
	// Durations in logs are seconds, as in /admin/status and /metrics.
	zerolog.DurationFieldUnit = time.Second
}

// newLogger returns the process's logger writing to w: JSON lines, or a
// human-readable console when asked or when w is a terminal.
func newLogger(c logConfig, w io.Writer) (zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(strings.ToLower(c.Level))
	if err != nil || c.Level == "" {
		return zerolog.Nop(), fmt.Errorf("--log-level %q: want debug, info, warn or error", c.Level)
	}
	switch c.Format {
	case "json":
	case "pretty":
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	case "auto", "":
		if isTerminal(w) {
			w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
		}
	default:
		return zerolog.Nop(), fmt.Errorf("--log-format %q: want json, pretty or auto", c.Format)
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a terminal (a progress bar or colours
// make sense there, not in a file or a pipe).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newHTTPServer returns a server for h with c's limits; net/http's own
// complaints (TLS handshakes, bad requests) go to log.
func newHTTPServer(h http.Handler, c httpConfig, log zerolog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		// Twice the limit: the public API's handler answers a header block
		// over --max-header-bytes itself, as JSON counted toward the error
		// limit; only beyond this does net/http answer (rewritten to JSON
		// by httplog.JSONErrors).
		MaxHeaderBytes: 2 * c.MaxHeaderBytes,
		ErrorLog:       stdlog.New(log.With().Str("level", "warn").Logger(), "", 0),
	}
}

// holdFlag is --tables-in-memory or --stores-in-memory: true, false or
// auto. Given alone, as the boolean flags they were before auto, it means
// true.
type holdFlag string

const (
	holdAlways holdFlag = "true"
	holdNever  holdFlag = "false"
	holdAuto   holdFlag = "auto"
)

func (h *holdFlag) String() string { return string(*h) }

func (h *holdFlag) Set(v string) error {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "auto":
		*h = holdAuto
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q: want true, false or auto", v)
	}
	*h = holdNever
	if b {
		*h = holdAlways
	}
	return nil
}

func (h *holdFlag) IsBoolFlag() bool { return true }
