package main

import (
	"runtime"
)

// defaultSpareProcs is how many scheduler threads (GOMAXPROCS) gds serve
// runs beyond its search slots. With one thread per slot, every thread is
// often busy searching, and a request that arrives meanwhile waits in the
// Go scheduler's run queues, which are not first come, first served: at
// 10M names and 16 connections on 2 cores a request ready to run waited a
// median 0.9 ms but 14 ms at the 99th percentile (a runtime trace,
// 2026-11-25). A spare thread reads such requests at once and puts them in
// the gate's queue, in order (docs/performance.md, "Where the contains
// tail came from").
const defaultSpareProcs = 1

// procsPlan returns the search slots and the GOMAXPROCS for gds serve:
// cores is the scheduler's own choice (the CPUs, a cgroup's quota or the
// GOMAXPROCS variable), maxSearches and spare the flags (0: the defaults,
// a negative spare: none), envSet whether GOMAXPROCS is in the
// environment, which is then kept as it is.
func procsPlan(cores, maxSearches, spare int, envSet bool) (slots, procs int) {
	slots = maxSearches
	if slots <= 0 {
		slots = cores
	}
	if spare == 0 {
		spare = defaultSpareProcs
	}
	procs = cores
	if !envSet && spare > 0 {
		procs = cores + spare
	}
	return slots, procs
}

// startProcs is the scheduler's choice before serve changed it: a second
// serve in one process (tests) must not add its spare to the first's.
var startProcs = runtime.GOMAXPROCS(0)

// applyProcs sets the search slots in cfg and GOMAXPROCS for serving, and
// returns the two and a function that puts GOMAXPROCS back.
func applyProcs(cfg *serveConfig, getenv func(string) string) (slots, procs int, restore func()) {
	slots, procs = procsPlan(startProcs, cfg.MaxConcurrentSearches, cfg.SpareProcs, getenv("GOMAXPROCS") != "")
	cfg.MaxConcurrentSearches = slots
	prev := runtime.GOMAXPROCS(procs)
	return slots, procs, func() { runtime.GOMAXPROCS(prev) }
}
