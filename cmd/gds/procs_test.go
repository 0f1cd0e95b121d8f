package main

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestProcsPlan(t *testing.T) {
	for _, c := range []struct {
		cores, maxSearches, spare int
		envSet                    bool
		slots, procs              int
	}{
		{cores: 2, slots: 2, procs: 3},                               // the defaults: a slot per core, one thread spare
		{cores: 8, spare: 2, slots: 8, procs: 10},                    // --spare-procs 2
		{cores: 2, spare: -1, slots: 2, procs: 2},                    // --spare-procs -1: none
		{cores: 4, maxSearches: 1, slots: 1, procs: 5},               // --max-concurrent-searches 1
		{cores: 6, envSet: true, slots: 6, procs: 6},                 // GOMAXPROCS=6 is kept
		{cores: 3, maxSearches: 2, envSet: true, slots: 2, procs: 3}, // GOMAXPROCS=3 with 2 slots
	} {
		slots, procs := procsPlan(c.cores, c.maxSearches, c.spare, c.envSet)
		if slots != c.slots || procs != c.procs {
			t.Errorf("procsPlan(%d cores, %d searches, %d spare, env %v) = %d slots, %d procs; want %d, %d",
				c.cores, c.maxSearches, c.spare, c.envSet, slots, procs, c.slots, c.procs)
		}
	}
}

// gds serve runs its spare scheduler threads while serving (read from
// GDS_SPARE_PROCS here) and puts GOMAXPROCS back when it returns.
func TestServeSpareProcs(t *testing.T) {
	s := startServe(t, envMap("GDS_SPARE_PROCS", "2"), "--snapshot", opsSnapshot(t),
		"--data", filepath.Join(t.TempDir(), "data"), "--admin-addr", "127.0.0.1:0")
	if got, want := runtime.GOMAXPROCS(0), startProcs+2; got != want {
		t.Errorf("GOMAXPROCS while serving = %d, want %d", got, want)
	}
	var found bool
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var l struct {
			Message string
			Slots   int `json:"search_slots"`
			Procs   int `json:"gomaxprocs"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Message == "searches at once" {
			found = l.Slots == startProcs && l.Procs == startProcs+2
		}
	}
	if !found {
		t.Errorf("no \"searches at once\" line with %d slots and GOMAXPROCS %d:\n%s", startProcs, startProcs+2, s.stderr.String())
	}
	if err := s.stop(t); err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != startProcs {
		t.Errorf("GOMAXPROCS after serve returned = %d, want %d", got, startProcs)
	}
}
