//go:build fleet || soak

package main

// Helpers of the tests that run gds beside other real servers (build tags
// fleet and soak): the S3 gateway, processes with their output, snapshots
// with a share of names changed.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gds/snapshots"
	"gds/snapshots/synth"
)

func fleetTool(t *testing.T, name, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	for _, p := range []string{filepath.Join("..", "..", "bin", name)} {
		if _, err := os.Stat(p); err == nil {
			abs, _ := filepath.Abs(p)
			return abs
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (set %s, or run make test-fleet, which installs it)", name, env)
	}
	return p
}

// fleetEnv sets what every process of a test fleet reads: the local S3
// server's credentials and region, no instance metadata, and no
// per-client limits (one client through HAProxy is the whole load).
func fleetEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "gdsfleet")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "gdsfleetsecret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("GDS_RATE_LIMIT", "off")
	t.Setenv("GDS_ERROR_LIMIT", "1000000")
}

// s3Server is versitygw serving a directory.
type s3Server struct {
	bin, dir, addr string
	proc           *gdsProc
}

func (s *s3Server) start(t *testing.T) {
	t.Helper()
	s.proc = startProc(t, "versitygw", s.bin, "--access", os.Getenv("AWS_ACCESS_KEY_ID"),
		"--secret", os.Getenv("AWS_SECRET_ACCESS_KEY"), "--port", s.addr, "posix", s.dir)
	waitFor(t, "versitygw listening", time.Minute, func() bool {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func (s *s3Server) stop(t *testing.T) {
	t.Helper()
	s.proc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.proc.exited:
	case <-time.After(30 * time.Second):
		s.proc.kill()
	}
}

// envValue reads the variable key with parse, or gives def when it is
// unset; a value parse refuses fails the test, saying what is wanted.
func envValue[T any](t *testing.T, key string, def T, want string, parse func(string) (T, bool)) T {
	t.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	v, ok := parse(s)
	if !ok {
		t.Fatalf("%s=%q: want %s", key, s, want)
	}
	return v
}

func fleetGetStatus(t *testing.T, u string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// adminStatus reads /admin/status from the operator port at admin into st.
func adminStatus(t *testing.T, admin string, st any) error {
	t.Helper()
	code, body := fleetGetStatus(t, "http://"+admin+"/admin/status")
	if code != http.StatusOK {
		return fmt.Errorf("/admin/status = %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), st); err != nil {
		return fmt.Errorf("/admin/status: %w", err)
	}
	return nil
}

func fleetPost(t *testing.T, u, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// renameShare copies snap to dir with every every-th character renamed.
func renameShare(t *testing.T, src, dir string, every int64) error {
	snap, err := snapshots.OpenManifest(src)
	if err != nil {
		return err
	}
	return synth.Rename(snap, dir, snap.Manifest.Source+" (renamed)", every, func(name string) string { return name + " Renamed" })
}
