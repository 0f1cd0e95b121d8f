package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes what the tests share across the package (the gds
// binary built once and the big synthetic snapshot beside it).
func TestMain(m *testing.M) {
	code := m.Run()
	if faultBin != "" {
		os.RemoveAll(filepath.Dir(faultBin))
	}
	os.Exit(code)
}
