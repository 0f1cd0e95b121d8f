package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gds/api/httplog"
)

// A body over the limit is refused inside the error limiter: 413 with the
// error-limit headers, counted, and 420 once the client is at its limit,
// whether its length was announced or only found by reading.
func TestBodyTooLargeFollowsErrorLimit(t *testing.T) {
	for _, hidden := range []bool{false, true} {
		t.Run(fmt.Sprintf("length hidden %v", hidden), func(t *testing.T) {
			ts := newTestServer(t, searchRecords(), func(d *Deps) {
				d.Limits.ErrorLimit = 2
				d.Limits.MaxBodyBytes = 1 << 10
			})
			big := `["` + strings.Repeat("a", 2<<10) + `"]`
			for i, want := range []struct {
				status int
				remain string
			}{{413, "1"}, {413, "0"}, {StatusErrorLimited, "0"}} {
				body := io.Reader(strings.NewReader(big))
				if hidden {
					body = chunked(big)
				}
				rec := ts.do(http.MethodPost, "/v1/universe/ids/", body, "Content-Type", "application/json")
				requireJSONError(t, fmt.Sprintf("request %d", i+1), rec, want.status)
				if got := rec.Header().Get(HeaderErrorLimitRemain); got != want.remain {
					t.Errorf("request %d: %s = %q, want %q", i+1, HeaderErrorLimitRemain, got, want.remain)
				}
			}
		})
	}
}

// A request line and headers over the limit get a JSON 431 with the
// error-limit headers; so does a header block beyond what the server
// reads at all (net/http's own answer, rewritten on the connection).
func TestHeadersTooLargeJSON(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) { d.Limits.MaxHeaderBytes = 8 << 10 })
	srv := httptest.NewUnstartedServer(ts.h)
	srv.Config.MaxHeaderBytes = 16 << 10 // as gds serve: twice the limit
	srv.Listener = httplog.JSONErrors(srv.Listener, ts.h.(*Handler).Rejected)
	srv.Start()
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		size   int
		remain string
	}{{"just over the limit", 9 << 10, "99"}, {"beyond what the server reads", 64 << 10, "98"}} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		go fmt.Fprintf(conn, "GET /latest/search/?search=jita&categories=character HTTP/1.1\r\nHost: x\r\nX-Junk: %s\r\n\r\n",
			strings.Repeat("j", tc.size))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		conn.Close()
		var b ErrorBody
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || json.Unmarshal(raw, &b) != nil || b.Error == "" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s %q, want a JSON 431", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
		if got := resp.Header.Get(HeaderErrorLimitRemain); got != tc.remain {
			t.Errorf("%s: %s = %q, want %q", tc.name, HeaderErrorLimitRemain, got, tc.remain)
		}
	}
}

// A body that stops arriving is answered 408 when the server's read
// deadline passes, with a plain message (no socket addresses); an endless
// chunked body is cut at the limit and answered 413.
func TestSlowAndEndlessBodies(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) { d.Limits.MaxBodyBytes = 64 << 10 })
	srv := httptest.NewUnstartedServer(ts.h)
	srv.Config.ReadTimeout = time.Second
	srv.Start()
	defer srv.Close()
	send := func(head string, body func(w io.Writer)) (int, string) {
		t.Helper()
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() {
			io.WriteString(conn, head)
			body(conn)
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	code, body := send("POST /v1/universe/ids/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
		func(w io.Writer) { io.WriteString(w, `["Ji`) }) // and nothing more
	if code != http.StatusRequestTimeout || !strings.Contains(body, `"error"`) || strings.Contains(body, "127.0.0.1") {
		t.Errorf("slow body: %d %s, want 408 without socket addresses", code, body)
	}
	code, body = send("POST /v1/universe/ids/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
		func(w io.Writer) {
			chunk := fmt.Sprintf("%x\r\n%s\r\n", 1<<20, strings.Repeat("a", 1<<20))
			for range 50 { // 50 MB, unless the server hangs up first
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"error"`) {
		t.Errorf("50 MB chunked body: %d %s, want 413", code, body)
	}
}
