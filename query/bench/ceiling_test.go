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
	"syscall"
	"time"
)

// The ceiling: a minimal net/http server, in a process of its own (this
// test binary re-executed in the "ceiling" role) as gds serve is, that
// answers every request (path, and a POST's body) from memory with the answer gds gave for it
// (status, every header with values of the same size, the body). Driven by
// the same wrk script as gds, it is what the machine, the kernel's loopback,
// net/http and the client cost with no work at all; gds's HTTP rows are
// reported as a fraction of it.

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
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, addr, len(reqBody), reqBody)
		} else {
			_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
		}
		if err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if resp.Close {
			return nil, fmt.Errorf("%s: the server closed the connection", p)
		}
		consumed := cr.n - br.Buffered()
		out = append(out, answer{URI: p, Status: resp.StatusCode, Header: resp.Header, Body: body, Size: consumed - used})
		used = consumed
	}
	return out, nil
}

// sameShape compares the ceiling's answers with gds's: the same status and
// body, the same header names with values of the same length, the same size
// on the wire. It returns how many differ and the first difference.
func sameShape(gds, ceil []answer) (differ int, first string) {
	note := func(format string, args ...any) {
		if differ++; first == "" {
			first = fmt.Sprintf(format, args...)
		}
	}
	if len(gds) != len(ceil) {
		note("%d answers from gds, %d from the ceiling", len(gds), len(ceil))
		return
	}
	for i := range gds {
		g, c := gds[i], ceil[i]
		switch {
		case g.Status != c.Status:
			note("%s: status %d, ceiling %d", g.URI, g.Status, c.Status)
		case !bytes.Equal(g.Body, c.Body):
			note("%s: bodies differ (%d and %d bytes)", g.URI, len(g.Body), len(c.Body))
		case g.Size != c.Size:
			note("%s: %d bytes on the wire, ceiling %d", g.URI, g.Size, c.Size)
		default:
			for k, vs := range g.Header {
				cv := c.Header[k]
				if len(cv) != len(vs) {
					note("%s: header %s: %d values, ceiling %d", g.URI, k, len(vs), len(cv))
					break
				}
				for j := range vs {
					if len(vs[j]) != len(cv[j]) {
						note("%s: header %s: %q, ceiling %q", g.URI, k, vs[j], cv[j])
						break
					}
				}
			}
		}
	}
	return
}

// helperCeiling is the ceiling process: it loads the answers, listens on
// loopback, writes its address to a.Out and serves until SIGTERM.
func helperCeiling(a helperArgs) error {
	raw, err := os.ReadFile(a.Answers)
	if err != nil {
		return err
	}
	var answers []answer
	if err := json.Unmarshal(raw, &answers); err != nil {
		return err
	}
	type ready struct {
		status int
		header http.Header
		body   []byte
	}
	byURI := make(map[string]*ready, len(answers))
	for _, an := range answers {
		h := an.Header.Clone()
		// net/http writes the Date (same length) and, past its buffer,
		// the chunking as a server would. It also writes the
		// Content-Length of a body its 2 KiB buffer holds, as gds serve
		// leaves it to; a longer body's is declared.
		h.Del("Date")
		h.Del("Transfer-Encoding")
		if len(an.Body) <= 2048 {
			h.Del("Content-Length")
		}
		byURI[an.URI] = &ready{status: an.Status, header: h, body: an.Body}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.RequestURI
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			key = postRequest(r.RequestURI, string(body))
		}
		an := byURI[key]
		if an == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		for k, v := range an.header {
			h[k] = v
		}
		w.WriteHeader(an.status)
		w.Write(an.body)
	}), ReadHeaderTimeout: 5 * time.Second}
	tmp := a.Out + ".tmp"
	if err := os.WriteFile(tmp, []byte(l.Addr().String()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, a.Out); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; srv.Close() }()
	if err := srv.Serve(l); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// ceiling is a running ceiling process.
type ceiling struct {
	cmd    *exec.Cmd
	addr   string
	exited chan struct{}
}

// startCeiling writes the answers to dir, starts the ceiling process on
// them and waits for its address.
func startCeiling(dir, name string, answers []answer) (*ceiling, error) {
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
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(addrFile); err == nil {
			return &ceiling{cmd: cmd, addr: string(b), exited: exited}, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("the ceiling process exited: %v (log %s)", cmd.ProcessState, logf.Name())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("the ceiling process did not start within 2 minutes")
}

func (c *ceiling) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
}
