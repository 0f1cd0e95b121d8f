package browsertest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"gds/api/apitest"
)

// Root returns the module's root directory (the one holding go.mod),
// found upwards from the test's working directory.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Binary returns the gds binary make build wrote (bin/gds), or $GDS_BINARY:
// browser tests drive the real program, built the way it ships.
func Binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("GDS_BINARY")
	if path == "" {
		path = filepath.Join(Root(t), "bin", "gds")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no gds binary at %s (%v): run `make build` (make test-browser does)", path, err)
	}
	return path
}

// Server is a running `gds serve`.
type Server struct {
	// URL and AdminURL are the public and operator ports' base URLs,
	// e.g. "http://127.0.0.1:41234".
	URL, AdminURL string
	// Data is the server's --data directory.
	Data string
}

// ServeOptions change how Serve starts gds.
type ServeOptions struct {
	// Snapshot to serve; the committed sample when empty.
	Snapshot string
	// Args are added to the serve command line.
	Args []string
	// Env is added to the server's environment.
	Env []string
	// ReadyTimeout bounds the wait for the first generation; 2 minutes
	// when zero (the sample builds in seconds; 10M names take minutes).
	ReadyTimeout time.Duration
}

// Serve starts `gds serve` on free loopback ports with a data directory
// under t.TempDir, waits until the operator port's /readyz says the first
// generation is live, and stops the server (SIGTERM) when the test ends.
// Its output is logged when the test fails.
func Serve(t testing.TB, o ServeOptions) *Server {
	t.Helper()
	if o.Snapshot == "" {
		o.Snapshot = filepath.Join(Root(t), "snapshots", "sample")
	}
	s := &Server{Data: t.TempDir()}
	addr, admin := apitest.FreeAddr(t), apitest.FreeAddr(t)
	s.URL, s.AdminURL = "http://"+addr, "http://"+admin
	args := append([]string{"serve", "--snapshot", o.Snapshot, "--data", s.Data, "--addr", addr, "--admin-addr", admin}, o.Args...)
	cmd := exec.Command(Binary(t), args...)
	logs := &apitest.Buffer{} // written from two pipes
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = append(os.Environ(), o.Env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("gds serve output:\n%s", logs.String())
		}
	})
	client := &http.Client{Timeout: 10 * time.Second}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	deadline := time.Now().Add(o.ReadyTimeout)
	for {
		resp, err := client.Get(s.AdminURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("gds serve exited before it was ready: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gds serve not ready after %v\n%s", o.ReadyTimeout, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// String describes the server for test logs.
func (s *Server) String() string {
	return fmt.Sprintf("gds serve at %s (operator %s)", s.URL, s.AdminURL)
}
