package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHelpSucceeds: -h and --help of every subcommand print its usage and
// succeed; an unknown flag is still a usage error.
func TestHelpSucceeds(t *testing.T) {
	for name := range commands {
		for _, h := range []string{"-h", "--help"} {
			var stderr bytes.Buffer
			err := run(context.Background(), []string{name, h}, func(string) string { return "" }, &bytes.Buffer{}, &stderr)
			if err != nil {
				t.Errorf("gds %s %s: %v", name, h, err)
			}
			if !strings.Contains(stderr.String(), "usage: gds "+name) {
				t.Errorf("gds %s %s printed %q", name, h, stderr.String())
			}
		}
		err := run(context.Background(), []string{name, "--no-such-flag"}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errUsage) || exitCode(err) != 2 {
			t.Errorf("gds %s --no-such-flag: %v", name, err)
		}
	}
}

// TestLogDurationsInSeconds: a duration logged by any package reads in
// seconds, the unit of /admin/status and /metrics.
func TestLogDurationsInSeconds(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(logConfig{Level: "info", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Dur("duration", 1500*time.Millisecond).Msg("x")
	if !strings.Contains(buf.String(), `"duration":1.5`) {
		t.Fatalf("logged %s, want duration 1.5 (seconds)", buf.String())
	}
}
