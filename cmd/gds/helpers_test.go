package main

import (
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Helpers every test of the package may use, whatever its build tags.

// needsBinary skips the test in -short mode: it builds the real gds binary
// and runs it, which takes seconds to minutes.
func needsBinary(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
}

// poll calls ok every 20 ms until it returns true, or until d has passed:
// it says which. A test waits for a condition this way, never sleeps a
// guess.
func poll(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// waitFor polls ok until it holds, failing the test after d.
func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	if !poll(d, ok) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// failIfExited fails the test when the process behind exited is gone:
// a condition it was to bring about will never come.
func failIfExited(t *testing.T, exited <-chan struct{}, format string, args ...any) {
	t.Helper()
	select {
	case <-exited:
		t.Fatalf(format, args...)
	default:
	}
}

// exchange sends req with c and reads the whole answer; a request that
// gets no answer fails the test.
func exchange(t *testing.T, c *http.Client, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

// mintToken has the binary bin mint a token for character with scopes on
// the local issuer of the data directory data (gds token), with flags
// added to the command line.
func mintToken(t *testing.T, bin, data string, character int64, scopes []string, flags ...string) string {
	t.Helper()
	args := append([]string{"token", "--data", data, "--character", strconv.FormatInt(character, 10),
		"--scopes", strings.Join(scopes, ",")}, flags...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("gds token: %v", err)
	}
	return strings.TrimSpace(string(out))
}
