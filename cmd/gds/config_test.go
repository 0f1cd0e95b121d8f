package main

import (
	"io"
	"testing"
)

// --stores-in-memory is true, false or auto (the default); given alone, as
// the boolean flag it was before auto, it means true.
func TestStoresInMemoryFlag(t *testing.T) {
	parse := func(env func(string) string, args ...string) (serveConfig, error) {
		return parseServeConfig(&Env{Getenv: env, Stdout: io.Discard, Stderr: io.Discard},
			append([]string{"--data", t.TempDir()}, args...))
	}
	for _, c := range []struct {
		env  []string
		args []string
		want holdFlag
	}{
		{nil, nil, holdAuto},
		{nil, []string{"--stores-in-memory"}, holdAlways},
		{nil, []string{"--stores-in-memory=false"}, holdNever},
		{nil, []string{"--stores-in-memory=TRUE"}, holdAlways},
		{nil, []string{"--stores-in-memory=auto"}, holdAuto},
		{[]string{"GDS_STORES_IN_MEMORY", "false"}, nil, holdNever},
		{[]string{"GDS_STORES_IN_MEMORY", "auto"}, []string{"--stores-in-memory"}, holdAlways},
	} {
		cfg, err := parse(envMap(c.env...), c.args...)
		if err != nil || cfg.StoresInMemory != c.want {
			t.Errorf("env %q, flags %q: %q (%v), want %q", c.env, c.args, cfg.StoresInMemory, err, c.want)
		}
	}
	for _, bad := range [][]string{{"--stores-in-memory=sometimes"}, {"--stores-in-memory="}} {
		if _, err := parse(envMap(), bad...); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := parse(envMap("GDS_STORES_IN_MEMORY", "yes please")); err == nil {
		t.Error(`GDS_STORES_IN_MEMORY="yes please" accepted`)
	}
}
