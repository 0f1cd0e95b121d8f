package httplog_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"gds/api/httplog"
)

// net/http's own answers (a header block over MaxHeaderBytes, a malformed
// request) leave as {"error": ...}, and the reject hook may change the
// status and add headers; handlers' answers pass untouched.
func TestJSONErrorsRewritesPlainAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var rejected atomic.Int32
	srv := &http.Server{
		MaxHeaderBytes: 4 << 10,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			io.WriteString(w, "handler text")
		}),
	}
	go srv.Serve(httplog.JSONErrors(ln, func(remote string, status int) (int, http.Header) {
		if !strings.HasPrefix(remote, "127.0.0.1:") {
			t.Errorf("reject told of %q, want the peer's address", remote)
		}
		h := http.Header{"X-Count": {fmt.Sprint(rejected.Add(1))}}
		if rejected.Load() > 2 {
			return 420, h
		}
		return status, h
	}))
	defer srv.Close()
	roundTrip := func(request string) (*http.Response, string) {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go io.WriteString(conn, request)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	for i, tc := range []struct {
		name, request string
		status        int
	}{
		{"huge header", "GET / HTTP/1.1\r\nHost: x\r\nX-Junk: " + strings.Repeat("j", 64<<10) + "\r\n\r\n", 431},
		{"malformed request", "GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n", 400},
		{"after the hook's limit", "GET / HTTP/1.1\r\nBad Header Line\r\n\r\n", 420},
	} {
		resp, body := roundTrip(tc.request)
		var b struct{ Error string }
		if resp.StatusCode != tc.status || json.Unmarshal([]byte(body), &b) != nil || b.Error == "" {
			t.Errorf("%s: %d %q, want %d with a JSON error", tc.name, resp.StatusCode, body, tc.status)
		}
		if got := resp.Header.Get("X-Count"); got != fmt.Sprint(i+1) {
			t.Errorf("%s: the hook's header = %q, want %d", tc.name, got, i+1)
		}
	}
	if resp, body := roundTrip("GET / HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 || body != "handler text" {
		t.Errorf("a handler's answer: %d %q, want it untouched", resp.StatusCode, body)
	}
}
