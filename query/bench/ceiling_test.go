//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// The ceilings: what the machine, the kernel's loopback, the HTTP server
// and the client cost with no work at all, driven by the same wrk script
// as gds. Per scenario each answers every request with one prepared
// answer, the scenario's median-sized answer from gds (status, every
// header, the body), with no per-request lookup: a minimal net/http server
// in a process of its own (this test binary re-executed in the "ceiling"
// role), as gds serve is; and nginx (Debian's) returning the same status
// and body with the same headers added (nginx.go). gds's HTTP rows are
// reported as a fraction of the first.

// answer is one captured HTTP answer.
type answer struct {
	URI    string      `json:"uri"`
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
	Size   int         `json:"size"` // bytes on the wire: status line, headers, body
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// capture asks addr for every request (see splitRequest) over one
// keep-alive connection, as wrk sends it (request line and Host, and a
// POST's body with its type and length; no gzip asked for), and
// returns the answers as they came, with their size on the wire.
func capture(addr string, paths []string) ([]answer, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	cr := &countingReader{r: conn}
	br := bufio.NewReaderSize(cr, 64<<10)
	out := make([]answer, 0, len(paths))
	used := 0
	for _, p := range paths {
		conn.SetDeadline(time.Now().Add(time.Minute))
		method, path, reqBody := splitRequest(p)
		var err error
		if method == http.MethodPost {
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", path, addr, requestType(p), len(reqBody), reqBody)
		} else {
			_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
		}
		if err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if resp.Close {
			return nil, fmt.Errorf("%s %s: the server closed the connection after %d %s", method, path, resp.StatusCode, tail(string(body), 200))
		}
		consumed := cr.n - br.Buffered()
		out = append(out, answer{URI: p, Status: resp.StatusCode, Header: resp.Header, Body: body, Size: consumed - used})
		used = consumed
	}
	return out, nil
}

// median is the answer of median size on the wire among answers (the
// lower median), the one a ceiling serves for the whole scenario.
func median(answers []answer) answer {
	sorted := slices.Clone(answers)
	slices.SortStableFunc(sorted, func(a, b answer) int { return a.Size - b.Size })
	return sorted[(len(sorted)-1)/2]
}

// sameShape compares a ceiling's answer with gds's: the same status and
// body, the same header names with values of the same length, the same
// size on the wire; "" when they agree.
func sameShape(g, c answer) string {
	switch {
	case g.Status != c.Status:
		return fmt.Sprintf("status %d, ceiling %d", g.Status, c.Status)
	case !bytes.Equal(g.Body, c.Body):
		return fmt.Sprintf("bodies differ (%d and %d bytes)", len(g.Body), len(c.Body))
	case g.Size != c.Size:
		return fmt.Sprintf("%d bytes on the wire, ceiling %d", g.Size, c.Size)
	}
	for k, vs := range g.Header {
		cv := c.Header[k]
		if len(cv) != len(vs) {
			return fmt.Sprintf("header %s: %d values, ceiling %d", k, len(vs), len(cv))
		}
		for j := range vs {
			if len(vs[j]) != len(cv[j]) {
				return fmt.Sprintf("header %s: %q, ceiling %q", k, vs[j], cv[j])
			}
		}
	}
	return ""
}

// ceilingAnswer is what the ceiling serves on one port.
type ceilingAnswer struct {
	Name   string `json:"name"`
	Answer answer `json:"answer"`
}

// helperCeiling is the ceiling process: it listens on one loopback port
// per answer, writes the addresses (JSON, name to address) to a.Out and
// serves until SIGTERM. Every request on a port gets that port's answer.
func helperCeiling(a helperArgs) error {
	raw, err := os.ReadFile(a.Answers)
	if err != nil {
		return err
	}
	var answers []ceilingAnswer
	if err := json.Unmarshal(raw, &answers); err != nil {
		return err
	}
	addrs := map[string]string{}
	var servers []*http.Server
	errs := make(chan error, len(answers))
	for _, ca := range answers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		addrs[ca.Name] = l.Addr().String()
		srv := &http.Server{Handler: fixedAnswer(ca.Answer), ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(l); err != http.ErrServerClosed {
				errs <- err
			}
		}()
	}
	raw, _ = json.Marshal(addrs)
	tmp := a.Out + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, a.Out); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case err = <-errs:
	}
	for _, srv := range servers {
		srv.Close()
	}
	return err
}

// fixedAnswer is a handler that writes an's status, headers and body to
// every request, from values prepared once.
func fixedAnswer(an answer) http.Handler {
	h := an.Header.Clone()
	// net/http writes the Date (same length) and, past its buffer, the
	// chunking as a server would. It also writes the Content-Length of a
	// body its 2 KiB buffer holds, as gds serve leaves it to; a longer
	// body's is declared.
	h.Del("Date")
	h.Del("Transfer-Encoding")
	if len(an.Body) <= 2048 {
		h.Del("Content-Length")
	}
	keys := make([]string, 0, len(h))
	vals := make([][]string, 0, len(h))
	for k, v := range h {
		keys, vals = append(keys, k), append(vals, v)
	}
	status, body := an.Status, an.Body
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		wh := w.Header()
		for i, k := range keys {
			wh[k] = vals[i]
		}
		w.WriteHeader(status)
		w.Write(body)
	})
}

// ceiling is a running ceiling process.
type ceiling struct {
	*process
	addrs map[string]string // scenario to address
}

// startCeiling writes the answers to dir, starts the ceiling process on
// them and waits for its addresses.
func startCeiling(dir, name string, answers []ceilingAnswer) (*ceiling, error) {
	file := filepath.Join(dir, "ceiling-"+name+".json")
	raw, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		return nil, err
	}
	addrFile := filepath.Join(dir, "ceiling-"+name+".addr")
	os.Remove(addrFile)
	args, _ := json.Marshal(helperArgs{Answers: file, Out: addrFile})
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchHelper$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), helperEnv+"=ceiling", "GDS_BENCH_ARGS="+string(args))
	logf, err := os.Create(filepath.Join(dir, "ceiling-"+name+".log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	p, err := startProcess(cmd, logf)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(addrFile); err == nil {
			c := &ceiling{process: p}
			if err := json.Unmarshal(b, &c.addrs); err != nil {
				c.stop()
				return nil, err
			}
			return c, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("the ceiling process exited: %v (log %s)", cmd.ProcessState, logf.Name())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("the ceiling process did not start within 2 minutes")
}
