package admin_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/api/admin"
	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query/analyst"
)

// blockingWriter is a client that stops reading: its first write waits
// until release is closed.
type blockingWriter struct {
	*httptest.ResponseRecorder
	once    sync.Once
	writing chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.release
	return w.ResponseRecorder.Write(b)
}

// An analysts' query past --analyst-timeout stops and gets a JSON 504;
// while --analyst-concurrency queries run (an export held by a client
// that stops reading), another waits briefly and gets a JSON 503 with
// Retry-After; once the slot is free, queries answer again.
func TestAnalystBounds(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	indexertest.Build(t, mgr, indexer.BuildRequest{Snapshot: snapshot(t, 20_000), Trigger: "test"})
	opts := admin.Options{Indexer: mgr, Analysts: analyst.New(mgr), Metrics: metrics, Logger: zerolog.New(io.Discard)}

	opts.AnalystTimeout = time.Nanosecond // over before the engine starts
	h := admin.New(opts)
	for _, q := range []string{"name:*alph*", "*&facets=corporation_id", "words:pilot&format=csv"} {
		r := do(t, h, "GET", "/admin/query?q="+q, "")
		if r.status != http.StatusGatewayTimeout || !strings.Contains(string(r.body), `"error":"The query ran longer than 1ns (--analyst-timeout)`) {
			t.Errorf("%s past its time: %d %s", q, r.status, r.body)
		}
	}

	opts.AnalystTimeout = 0 // the default, 10s
	h = admin.New(opts)
	held := &blockingWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), release: make(chan struct{})}
	exported := make(chan struct{})
	go func() {
		defer close(exported)
		req := httptest.NewRequest("GET", "/admin/query?q=words:pilot&format=csv&fields=name", nil)
		req.Host = "127.0.0.1:9090"
		h.ServeHTTP(held, req)
	}()
	select {
	case <-held.writing:
	case <-exported:
		t.Fatalf("the export finished without writing: %d %s", held.Code, held.Body)
	}
	r := do(t, h, "GET", "/admin/query?q=words:jita", "")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" ||
		!strings.Contains(string(r.body), `"error":"Analysts' queries run 1 at a time (--analyst-concurrency)`) {
		t.Errorf("a query while the slot is held: %d %v %s", r.status, r.header, r.body)
	}
	close(held.release)
	<-exported
	if r := do(t, h, "GET", "/admin/query?q=words:jita", ""); r.status != http.StatusOK {
		t.Errorf("a query once the slot is free: %d %s", r.status, r.body)
	}
}
