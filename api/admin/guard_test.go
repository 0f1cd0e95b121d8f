package admin_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"gds/api/admin"
)

// The operator port refuses what a hostile web page could make the
// operator's browser send: cross-origin requests, non-JSON POSTs, and
// requests through a rebound DNS name. A real server, so the socket's own
// address is what the Host is checked against.
func TestGuardRefusesBrowserAttacks(t *testing.T) {
	metrics := admin.NewMetrics()
	mgr := openManager(t, metrics)
	h := admin.New(admin.Options{Indexer: mgr, Snapshot: snapshot(t, 0), Metrics: metrics,
		Logger: zerolog.New(io.Discard), Hosts: []string{"ops.example.net", "Gate.Example.Net:9443"}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := strings.Cut(addr, ":")

	for _, tc := range []struct {
		name, method, path, host string
		header                   []string
		want                     int
	}{
		{"own address", "GET", "/admin/status", "", nil, 200},
		{"localhost on loopback", "GET", "/admin/status", "localhost:" + port, nil, 200},
		{"configured name", "GET", "/admin/status", "ops.example.net:" + port, nil, 200},
		{"configured name and port", "GET", "/admin/status", "gate.example.net:9443", nil, 200},
		{"dns rebinding", "GET", "/admin/query?q=access:90198386&category=structure", "rebind.evil.example:" + port, nil, 403},
		{"rebinding the metrics", "GET", "/metrics", "rebind.evil.example", nil, 403},
		{"another ip", "GET", "/admin/status", "10.1.2.3:" + port, nil, 403},
		{"cross-site reindex", "POST", "/admin/reindex", "", []string{"Content-Type", "text/plain", "Origin", "http://evil.example"}, 403},
		{"cross-site fetch metadata", "GET", "/admin/status", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"same-site fetch metadata", "GET", "/admin/status", "", []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"same origin", "GET", "/admin/status", "", []string{"Origin", srv.URL, "Sec-Fetch-Site", "same-origin"}, 200},
		{"text/plain post", "POST", "/admin/reindex", "", []string{"Content-Type", "text/plain"}, 415},
		{"form post", "POST", "/admin/reindex", "", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"post without type", "POST", "/admin/reindex", "", nil, 415},
		{"json post", "POST", "/admin/reindex", "", []string{"Content-Type", "application/json; charset=utf-8"}, 202},
		// Probes answer load balancers, which send any Host.
		{"probe by any name", "GET", "/healthz", "lb.internal", nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(`{"full":false}`)
			}
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, body)
			if tc.host != "" {
				req.Host = tc.host
			}
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s Host %q = %d %s, want %d", tc.method, tc.path, req.Host, resp.StatusCode, raw, tc.want)
			}
			if tc.want >= 400 && !strings.HasPrefix(string(raw), `{"error":`) {
				t.Errorf("refusal body %s, want {\"error\": ...}", raw)
			}
		})
	}
}
