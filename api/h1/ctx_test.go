package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A handler waiting on its request's context learns that the client went
// away, as with net/http: a queued search gives up its place.
func TestClientGoneCancelsWaitingRequest(t *testing.T) {
	waited := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			waited <- r.Context().Err()
		case <-time.After(20 * time.Second):
			waited <- errors.New("not canceled within 20 s of the client closing")
		}
	})
	_, addr, _ := serveFast(t, h, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, get("/wait")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting handler's context: %v, want %v", err, context.Canceled)
	}
}

// Watching the connection reads what arrives meanwhile, a pipelined next
// request: it stays in the read buffer and is answered, and the request
// being watched is not canceled for it.
func TestWatchKeepsTheNextRequest(t *testing.T) {
	watching := make(chan struct{})
	sent := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/first" {
			io.WriteString(w, "second answered")
			return
		}
		rc := r.Context().(*reqContext)
		rc.Done()
		close(watching)
		<-sent
		select {
		case <-rc.c.watching: // the background read took the next request's bytes
		case <-time.After(20 * time.Second):
			t.Error("the watch did not end when the next request arrived")
		}
		if err := rc.Err(); err != nil {
			t.Errorf("a request was canceled by the next one arriving: %v", err)
		}
		io.WriteString(w, "first answered")
	})
	_, addr, _ := serveFast(t, h, nil)
	c := dialRaw(t, addr)
	io.WriteString(c, get("/first"))
	<-watching
	io.WriteString(c, get("/second", "Connection: close\r\n"))
	close(sent)
	got, _ := io.ReadAll(c)
	if !strings.Contains(string(got), "first answered") || !strings.Contains(string(got), "second answered") {
		t.Fatalf("answers:\n%s", got)
	}
}

// A request's context is canceled once ServeHTTP returns, as net/http's,
// whether or not anything asked for its Done channel during the request.
func TestContextEndsWithTheRequest(t *testing.T) {
	ctxs := make(chan context.Context, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/asked" {
			r.Context().Done()
		}
		ctxs <- r.Context()
	})
	for _, addr := range []string{serveStd(t, h), func() string { _, a, _ := serveFast(t, h, nil); return a }()} {
		for _, path := range []string{"/asked", "/not"} {
			exchange(t, addr, get(path, "Connection: close\r\n"))
			ctx := <-ctxs
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Second):
				t.Fatalf("%s %s: the context is not canceled after the answer", addr, path)
			}
			if !errors.Is(ctx.Err(), context.Canceled) {
				t.Fatalf("%s %s: context error %v", addr, path, ctx.Err())
			}
		}
	}
}

// A handler that asked for Done and then hijacks the connection owns its
// reads: the watch stops first.
func TestHijackAfterWatch(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Context().Done()
		nc, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		line, _ := rw.ReadString('\n') // the client's next line, read by the new owner
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(line)) + "\r\nConnection: close\r\n\r\n" + line)
		rw.Flush()
	})
	_, addr, _ := serveFast(t, h, nil)
	c := dialRaw(t, addr)
	io.WriteString(c, get("/hijack")+"echo me\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if string(body) != "echo me\n" {
		t.Fatalf("hijacked connection read %q, want the client's next line", body)
	}
}

// dialRaw connects to addr; a failing test waits for its reads at most
// 30 s, and the connection closes with the test.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c
}
