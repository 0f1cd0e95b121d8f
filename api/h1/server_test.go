package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// handlers is a handler of every kind of answer the differential test
// compares: what net/http writes for each is what h1 must write.
func handlers() http.Handler {
	mux := http.NewServeMux()
	body := func(n int) []byte { return bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n] }
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"a":1}`)) })
	mux.HandleFunc("/typed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Add("Vary", "Accept-Encoding")
		w.Header().Add("Vary", "Accept-Language")
		w.Write([]byte(`[1,2,3]`))
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<html>gone</html>"))
	})
	mux.HandleFunc("/edge", func(w http.ResponseWriter, r *http.Request) { w.Write(body(bufferBeforeChunking)) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		for range 3 {
			w.Write(body(3000))
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Write(body(100))
		w.Write(body(maxOut + 5000))
		w.Write(body(maxOut - 10))
	})
	mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000")
		w.Write(body(2500))
		w.Write(body(2500))
		if _, err := w.Write([]byte("x")); err != http.ErrContentLength {
			panic("a write past the declared length went through")
		}
	})
	mux.HandleFunc("/badlength", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "ten")
		w.Write(body(10))
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		w.Write(body(5))
	})
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "3")
		w.WriteHeader(http.StatusNoContent)
		if _, err := w.Write([]byte("abc")); err != http.ErrBodyNotAllowed {
			panic("a body went out with 204")
		}
	})
	mux.HandleFunc("/notmodified", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "3")
		w.Header().Set("Etag", `"x"`)
		w.WriteHeader(http.StatusNotModified)
	})
	mux.HandleFunc("/flush", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first;"))
		w.(http.Flusher).Flush()
		w.Write([]byte("second"))
	})
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["X-Spaces"] = []string{"  padded \t"}
		h["X-Breaks"] = []string{"one\r\ntwo\nthree"}
		h["Bad Name"] = []string{"dropped"}
		h["X-Empty"] = []string{""}
		h["Trailer"] = []string{"X-Later"}
		h["Date"] = []string{"Mon, 02 Jan 2006 15:04:05 GMT"}
		w.WriteHeader(http.StatusAccepted)
		h.Set("X-Too-Late", "not sent")
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Write([]byte("bye"))
	})
	mux.HandleFunc("/custom", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(420)
		w.Write([]byte(`{"error":"enhance your calm"}`))
	})
	mux.HandleFunc("/early", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Write([]byte("after hints"))
	})
	mux.HandleFunc("/hijack", func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer c.Close()
		rw.WriteString("HTTP/1.1 420 Error Limited\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
		rw.Flush()
	})
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("partial"))
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// The request as the handler sees it.
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %q host=%q close=%v len=%d body=%q proto=%s\n",
			r.Method, r.RequestURI, r.URL.String(), r.Host, r.Close, r.ContentLength, body, r.Proto)
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range r.Header {
				if !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			fmt.Fprintf(w, "%s=%q\n", k, r.Header[k])
		}
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		_, server := r.Context().Value(http.ServerContextKey).(*http.Server)
		fmt.Fprintf(w, "remote=%s local=%v server=%v", host, local != nil && strings.HasPrefix(local.String(), "127.0.0.1:"), server)
	})
	return mux
}

// serveFast starts h1 (in front of net/http) on loopback.
func serveFast(t testing.TB, h http.Handler, tune func(*Server)) (*Server, string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Handler: h, Fallback: &http.Server{Handler: h, ErrorLog: quietLog()},
		ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute, WriteTimeout: 10 * time.Second,
		Logger: zerolog.Nop()}
	if tune != nil {
		tune(s)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String(), done
}

// serveStd starts net/http alone on loopback.
func serveStd(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: h, ErrorLog: quietLog()}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

// exchange sends raw on a new connection and returns everything the
// server sends until it closes the connection.
func exchange(t testing.TB, addr, raw string) string {
	t.Helper()
	c := send(t, addr, raw, 30*time.Second) // only a failure waits for it: every exchange ends with a close
	defer c.Close()
	c.(*net.TCPConn).CloseWrite() // the end of the requests: both servers then close
	got, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading the answers to %q: %v", raw, err)
	}
	return string(got)
}

var dateLine = regexp.MustCompile(`\r\nDate: [^\r]*\r\n`)

// closing is a last request that makes the server close the connection.
const closing = "GET /empty HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

func get(path string, headers ...string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: example.com\r\n" + strings.Join(headers, "") + "\r\n"
}

// Every answer h1 gives, and every request it hands over, reads on the
// wire as net/http's answer to the same bytes (Date aside).
func TestAnswersAreNetHTTPs(t *testing.T) {
	h := handlers()
	_, fast, _ := serveFast(t, h, nil)
	std := serveStd(t, h)
	paths := []string{"/small", "/typed", "/empty", "/status", "/edge", "/big", "/huge", "/declared",
		"/badlength", "/short", "/nocontent", "/notmodified", "/flush", "/headers", "/close", "/custom",
		"/early", "/hijack", "/panic", "/echo?x=1&y=%20&z=%zz"}
	cases := map[string]string{}
	for _, p := range paths {
		cases[p] = get(p) + closing
	}
	for name, raw := range map[string]string{
		"headers":          get("/echo", "user-agent: t\r\n", "X-Multi: 1\r\n", "X-Multi:2\r\n", "x-odd_Name:  v \t\r\n", "Pragma: no-cache\r\n", "Accept:\r\n") + closing,
		"close":            get("/echo", "Connection: close\r\n"),
		"close any case":   get("/echo", "connection: CLOSE\r\n"),
		"keep-alive":       get("/echo", "Connection: keep-alive\r\n") + closing,
		"pipelined":        get("/small") + get("/typed") + get("/big") + get("/echo?a") + closing,
		"gin-like path":    get("/latest/search/?categories=character&search=Jita+Trader&strict=true", "Accept-Encoding: gzip\r\n") + closing,
		"post":             "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc" + closing,
		"chunked post":     "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + closing,
		"get with body":    "GET /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi" + closing,
		"head":             "HEAD /small HTTP/1.1\r\nHost: a\r\n\r\n" + closing,
		"after a fast one": get("/small") + "HEAD /small HTTP/1.1\r\nHost: a\r\n\r\n" + get("/typed") + closing,
		"http/1.0":         "GET /echo HTTP/1.0\r\n\r\n",
		"1.0 keep-alive":   "GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + closing,
		"no host":          "GET /echo HTTP/1.1\r\n\r\n",
		"two hosts":        "GET /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"bad host":         "GET /echo HTTP/1.1\r\nHost: a b\r\n\r\n",
		"empty host":       "GET /echo HTTP/1.1\r\nHost:\r\n\r\n" + closing,
		"bad header name":  "GET /echo HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n",
		"space before :":   "GET /echo HTTP/1.1\r\nHost: a\r\nX-A : x\r\n\r\n",
		"folded header":    "GET /echo HTTP/1.1\r\nHost: a\r\nX-A: x\r\n y\r\n\r\n",
		"control in value": "GET /echo HTTP/1.1\r\nHost: a\r\nX-A: x\x01y\r\n\r\n",
		"bare LF":          "GET /echo HTTP/1.1\nHost: a\n\n" + closing,
		"absolute target":  "GET http://a/echo HTTP/1.1\r\nHost: a\r\n\r\n" + closing,
		"asterisk":         "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n" + closing,
		"space in target":  "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
		"utf-8 target":     "GET /é HTTP/1.1\r\nHost: a\r\n\r\n" + closing,
		"upgrade":          "GET /echo HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n" + closing,
		"expect":           "GET /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n" + closing,
		"lowercase method": "get /echo HTTP/1.1\r\nHost: a\r\n\r\n",
		"http/2 preface":   "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"truncated":        "GET /echo HTTP/1.1\r\nHost: a\r\n",
		"garbage":          "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
		"leading CRLF":     "\r\n" + get("/echo") + closing,
		"big head":         get("/echo", "X-Big: "+strings.Repeat("b", 5000)+"\r\n") + closing,
		"head at the edge": get("/echo", "X-Big: "+strings.Repeat("b", bufSize-60)+"\r\n") + closing,
	} {
		cases[name] = raw
	}
	for name, raw := range cases {
		t.Run(strings.TrimPrefix(name, "/"), func(t *testing.T) {
			want := dateLine.ReplaceAllString(exchange(t, std, raw), "\r\nDate: D\r\n")
			got := dateLine.ReplaceAllString(exchange(t, fast, raw), "\r\nDate: D\r\n")
			if got != want {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("answers to %.200q differ from byte %d\n h1:       %.300q\n net/http: %.300q", raw, i, got[max(i-100, 0):], want[max(i-100, 0):])
			}
		})
	}
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// Heads net/http answers before the client sends more (bare LF line
// endings, which RFC 9112 allows; junk lines; a slowloris whose partial
// head already has a malformed line) get the same answer from h1 at
// once: the client keeps its side open, and only the answer (ending with
// a close) ends the exchange. h1 waits for a head's end here only where
// net/http waits too.
func TestOpenConnectionsAnsweredAsNetHTTP(t *testing.T) {
	h := handlers()
	// A read-header timeout longer than the exchange's deadline: waiting
	// for the head's end would fail the exchange, not just delay it.
	_, fast, _ := serveFast(t, h, func(s *Server) { s.ReadHeaderTimeout = time.Hour })
	std := serveStd(t, h)
	const closingLF = "GET /empty HTTP/1.1\nHost: x\nConnection: close\n\n"
	for name, raw := range map[string]string{
		"bare LF":               "GET /echo HTTP/1.1\nHost: a\n\n" + closingLF,
		"bare LF after CRLF":    get("/small") + "GET /echo HTTP/1.1\nHost: a\nX-A: b\n\n" + closingLF,
		"mixed endings":         "GET /echo HTTP/1.1\r\nHost: a\nX-A: 1\r\n\r\n" + closingLF,
		"LF ends a CRLF head":   "GET /echo HTTP/1.1\r\nHost: a\r\n\n" + closingLF,
		"junk line":             "hello there\r\n",
		"junk with LF":          "\x00\x01junk\n",
		"bad request line":      "GET /a b c HTTP/1.1\r\nHost: a\r\n",
		"slowloris, bad header": "GET /echo HTTP/1.1\r\nHost: a\r\nBad Header\r\n",
		"after a fast one":      get("/small") + "junk\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			want := dateLine.ReplaceAllString(exchangeOpen(t, std, raw), "\r\nDate: D\r\n")
			got := dateLine.ReplaceAllString(exchangeOpen(t, fast, raw), "\r\nDate: D\r\n")
			if got != want || got == "" {
				t.Errorf("answers to %q differ\n h1:       %q\n net/http: %q", raw, got, want)
			}
		})
	}
}

// exchangeOpen sends raw on a new connection, keeps its side open, and
// returns everything the server sends until it closes the connection (or
// what came within a deadline that only a failure reaches).
func exchangeOpen(t testing.TB, addr, raw string) string {
	t.Helper()
	c := send(t, addr, raw, 20*time.Second)
	defer c.Close()
	got, _ := io.ReadAll(c)
	return string(got)
}

// send sends raw on a new connection to addr and returns it; its reads
// and writes fail once deadline has passed.
func send(t testing.TB, addr, raw string, deadline time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(deadline))
	if _, err := io.WriteString(c, raw); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

// A connection waiting for its next request is closed after IdleTimeout,
// one that stops halfway through a head after ReadHeaderTimeout.
func TestTimeoutsCloseConnections(t *testing.T) {
	_, addr, _ := serveFast(t, handlers(), func(s *Server) {
		s.IdleTimeout, s.ReadHeaderTimeout = 100*time.Millisecond, 100*time.Millisecond
	})
	for name, raw := range map[string]string{
		"idle":      get("/small"),
		"half head": "GET /small HTTP/1.1\r\nHost: a\r\n",
		"silent":    "",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, raw)
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			got, err := io.ReadAll(c) // returns when the server closes
			if err != nil {
				t.Fatalf("the server did not close the connection: %v (read %q)", err, got)
			}
			if raw == get("/small") && !strings.Contains(string(got), `{"a":1}`) {
				t.Fatalf("no answer before the close: %q", got)
			}
		})
	}
}

// Shutdown closes idle connections at once, lets an answer under way
// finish (saying the connection closes), and then returns; Serve returns
// http.ErrServerClosed.
func TestShutdownWaitsForAnswersUnderWay(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		w.Write([]byte("done"))
	})
	mux.HandleFunc("/quick", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("quick")) })
	s, addr, served := serveFast(t, mux, nil)

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, get("/quick"))
	idleR := bufio.NewReader(idle)
	res, err := http.ReadResponse(idleR, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("quick: %v %v", res, err)
	}
	io.ReadAll(res.Body)

	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	io.WriteString(busy, get("/slow"))
	<-started

	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	idle.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := idleR.ReadByte(); err != io.EOF {
		t.Fatalf("the idle connection was not closed: %v", err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned while an answer was under way: %v", err)
	default:
	}
	close(release)
	busy.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err = http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != "done" || !res.Close {
		t.Fatalf("the answer under way: %q, close %v", b, res.Close)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Fatalf("Serve returned %v", err)
	}
}

// A handler that panics costs its connection, not the server.
func TestPanicClosesOnlyItsConnection(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	_, addr, _ := serveFast(t, mux, nil)
	if got := exchange(t, addr, get("/panic")); got != "" {
		t.Fatalf("a panicking handler's connection got %q", got)
	}
	if got := exchange(t, addr, get("/ok")+closing); !strings.Contains(got, "\r\n\r\nok") {
		t.Fatalf("after a panic: %q", got)
	}
}

// Many clients at once, each on its own keep-alive connection, every
// answer whole and its own, while Shutdown comes in the middle: answers
// under way finish, nothing is cut short.
func TestManyClientsThenShutdown(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/n/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte(r.PathValue("n")), 300)) // chunked past 2 KiB
	})
	s, addr, served := serveFast(t, mux, nil)
	const clients, each = 8, 100
	errs := make(chan error, clients)
	half := make(chan struct{}, clients)
	for i := range clients {
		go func() {
			tr := &http.Transport{MaxIdleConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr, Timeout: 20 * time.Second}
			for j := range each {
				if j == each/2 {
					half <- struct{}{}
				}
				n := fmt.Sprintf("%d-%d,", i, j)
				res, err := cl.Get("http://" + addr + "/n/" + n)
				if err != nil {
					if j >= each/2 {
						errs <- nil // refused after the shutdown: expected
						return
					}
					errs <- err
					return
				}
				b, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || string(b) != strings.Repeat(n, 300) {
					errs <- fmt.Errorf("client %d request %d: %v, %d bytes", i, j, err, len(b))
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		<-half
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Fatalf("Serve returned %v", err)
	}
}
