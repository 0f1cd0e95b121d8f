package main

import (
	"testing"
	"time"
)

// Helpers every test of the package may use, whatever its build tags.

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
