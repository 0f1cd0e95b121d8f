package main

import (
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"gds/api"
	"gds/api/admin"
	"gds/indexer"
)

// parseServe parses gds serve's flags after a --data of its own, with env
// as the environment.
func parseServe(t *testing.T, env func(string) string, args ...string) (serveConfig, error) {
	return parseServeConfig(&Env{Getenv: env, Stdout: io.Discard, Stderr: io.Discard},
		append([]string{"--data", t.TempDir()}, args...))
}

// --tables-in-memory and --stores-in-memory are true, false or auto (the
// default); given alone, as the boolean flags they were before auto, each
// means true.
func TestInMemoryFlags(t *testing.T) {
	parse := func(env func(string) string, args ...string) (serveConfig, error) { return parseServe(t, env, args...) }
	for _, f := range []struct {
		flag, env string
		of        func(serveConfig) holdFlag
	}{
		{"stores-in-memory", "GDS_STORES_IN_MEMORY", func(c serveConfig) holdFlag { return c.StoresInMemory }},
		{"tables-in-memory", "GDS_TABLES_IN_MEMORY", func(c serveConfig) holdFlag { return c.TablesInMemory }},
	} {
		for _, c := range []struct {
			env  []string
			args []string
			want holdFlag
		}{
			{nil, nil, holdAuto},
			{nil, []string{"--" + f.flag}, holdAlways},
			{nil, []string{"--" + f.flag + "=false"}, holdNever},
			{nil, []string{"--" + f.flag + "=TRUE"}, holdAlways},
			{nil, []string{"--" + f.flag + "=auto"}, holdAuto},
			{[]string{f.env, "false"}, nil, holdNever},
			{[]string{f.env, "auto"}, []string{"--" + f.flag}, holdAlways},
		} {
			cfg, err := parse(envMap(c.env...), c.args...)
			if got := f.of(cfg); err != nil || got != c.want {
				t.Errorf("env %q, flags %q: %q (%v), want %q", c.env, c.args, got, err, c.want)
			}
		}
		for _, bad := range [][]string{{"--" + f.flag + "=sometimes"}, {"--" + f.flag + "="}} {
			if _, err := parse(envMap(), bad...); err == nil {
				t.Errorf("%q accepted", bad)
			}
		}
		if _, err := parse(envMap(f.env, "yes please")); err == nil {
			t.Errorf(`%s="yes please" accepted`, f.env)
		}
	}
}

// --build-yield is the bound of a build's pauses (default
// api.DefaultBuildYield); 0 or negative turns yielding off, and the
// metrics are there either way.
func TestBuildYieldFlag(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want time.Duration
		on   bool
	}{
		{nil, nil, api.DefaultBuildYield, true},
		{nil, []string{"--build-yield", "5ms"}, 5 * time.Millisecond, true},
		{nil, []string{"--build-yield=0"}, 0, false},
		{nil, []string{"--build-yield=-1s"}, -time.Second, false},
		{[]string{"GDS_BUILD_YIELD", "100ms"}, nil, 100 * time.Millisecond, true},
	} {
		cfg, err := parseServe(t, envMap(c.env...), c.args...)
		if err != nil || cfg.BuildYield != c.want {
			t.Errorf("env %q, flags %q: %v (%v), want %v", c.env, c.args, cfg.BuildYield, err, c.want)
			continue
		}
		metrics := admin.NewMetrics()
		if y := newBuildYield(cfg.BuildYield, metrics); (y != nil) != c.on {
			t.Errorf("env %q, flags %q: pacer %v, want on %v", c.env, c.args, y, c.on)
		}
		n, err := testutil.GatherAndCount(metrics.Registry(), admin.MetricYieldPauses, admin.MetricYieldSeconds)
		if err != nil || n != 2 {
			t.Errorf("env %q, flags %q: %d yield metrics (%v), want 2", c.env, c.args, n, err)
		}
	}
	if _, err := parseServe(t, envMap(), "--build-yield", "soon"); err == nil {
		t.Error("--build-yield soon accepted")
	}
}

// --gc-percent is the server's GOGC: 400 unless given (or GDS_GC_PERCENT),
// and at least 1.
func TestGCPercentFlag(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want int
	}{
		{nil, nil, indexer.DefaultServeGCPercent},
		{nil, []string{"--gc-percent=100"}, 100},
		{[]string{"GDS_GC_PERCENT", "250"}, nil, 250},
	} {
		cfg, err := parseServe(t, envMap(c.env...), c.args...)
		if err != nil || cfg.GCPercent != c.want {
			t.Errorf("env %q, flags %q: %d (%v), want %d", c.env, c.args, cfg.GCPercent, err, c.want)
		}
	}
	for _, bad := range []string{"0", "-1", "many"} {
		if _, err := parseServe(t, envMap(), "--gc-percent="+bad); err == nil {
			t.Errorf("--gc-percent=%s accepted", bad)
		}
	}
}
