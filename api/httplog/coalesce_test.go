package httplog_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"gds/api/httplog"
)

// countingListener counts the writes that reach the connections, under
// whatever CoalesceWrites holds back.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// Every answer arrives whole and in order over one kept-alive connection,
// whatever its size around net/http's 4 KiB buffer (so one of them fills
// it exactly and leaves nothing for the final flush), streamed answers
// too; and nothing is held back waiting for the client's next request.
func TestCoalesceWritesDeliversEveryAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	body := bytes.Repeat([]byte("0123456789,"), 20000)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Has("stream") {
			// A first chunk that fills the buffer exactly with the head,
			// then a pause: the client must have it before the rest.
			w.Write(body[:n])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(body[:n])
	})}
	go srv.Serve(httplog.CoalesceWrites(countingListener{ln, &writes}))
	t.Cleanup(func() { srv.Close() })

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 20 * time.Second}
	get := func(n int) []byte {
		t.Helper()
		resp, err := client.Get("http://" + ln.Addr().String() + "/?n=" + strconv.Itoa(n))
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		return got
	}
	for _, n := range append([]int{0, 10, 5000, 100000, 200000}, rangeInts(3850, 4150)...) {
		if got := get(n); !bytes.Equal(got, body[:n]) {
			t.Fatalf("n=%d: got %d bytes, want %d, or different ones", n, len(got), n)
		}
	}

	// A 5 KB answer: head and body in one write, not two.
	before := writes.Load()
	get(5000)
	if w := writes.Load() - before; w != 1 {
		t.Errorf("a 5,000-byte answer took %d writes, want 1", w)
	}
}

func rangeInts(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// A streamed (chunked) answer flushed by its handler is never held back,
// even when its head and first chunk fill net/http's buffer exactly.
func TestCoalesceWritesNeverHoldsAStream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 8000)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write(body[:n])
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes: the client must have the first part
	})}
	go srv.Serve(httplog.CoalesceWrites(ln))
	t.Cleanup(func() { srv.Close() })
	for n := 3850; n < 4150; n++ {
		func() {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c, "GET /?n="+strconv.Itoa(n)+" HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
			got := make([]byte, n)
			if _, err := io.ReadFull(resp.Body, got); err != nil {
				t.Fatalf("n=%d: the flushed part did not arrive: %v", n, err)
			}
		}()
	}
}
