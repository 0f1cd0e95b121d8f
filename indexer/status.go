package indexer

import (
	"time"

	"gds/snapshots/disk"
)

// BuildResult reports one build attempt.
type BuildResult struct {
	ID       string    `json:"build_id"`
	Trigger  string    `json:"trigger"`
	Snapshot string    `json:"snapshot"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Duration Duration  `json:"duration"`
	// Generation is the generation made live, 0 when none was.
	Generation uint64 `json:"generation,omitempty"`
	// Unchanged is set when the snapshot was already the live one.
	Unchanged   bool `json:"unchanged,omitempty"`
	Incremental bool `json:"incremental"`
	Changed     int  `json:"changed"`
	// Searchable is how long the build took until its generation's
	// tables and record stores were live (searches answered from it);
	// Duration includes the analysts' bleve shards after that.
	Searchable Duration `json:"searchable,omitempty"`
	// Coalesced is set for a caller that joined a build already running.
	Coalesced bool   `json:"coalesced,omitempty"`
	Error     string `json:"error,omitempty"`
}

// OK reports whether the build succeeded.
func (r BuildResult) OK() bool { return r.Error == "" }

// Status is what an operator sees of the indexer.
type Status struct {
	Live      *Meta        `json:"live"`
	Parts     Parts        `json:"parts"`
	LastBuild *BuildResult `json:"last_build"`
	Building  *Running     `json:"building"`
	Schedule  *Schedule    `json:"schedule"`
	Failures  int          `json:"failures"`
	// HeldBytes is the memory the process holds generations' files in
	// (Options.TablesInMemory, StoresInMemory and their Auto: copies the
	// kernel cannot reclaim; a copy generations share counted once).
	HeldBytes int64 `json:"held_bytes"`
	// TablesHeld, StoresHeld and TyposHeld say whether the live
	// generation's name tables, record stores and typo indexes are held
	// in memory (Options.TablesInMemory, StoresInMemory, or their Auto and
	// they fit: inMemory.plan) rather than mapped.
	TablesHeld bool `json:"tables_held"`
	StoresHeld bool `json:"stores_held"`
	TyposHeld  bool `json:"typos_held"`
}

// Running describes a build in progress.
type Running struct {
	ID       string    `json:"build_id"`
	Trigger  string    `json:"trigger"`
	Snapshot string    `json:"snapshot"`
	Started  time.Time `json:"started"`
	Progress Progress  `json:"progress"`
	// PID is the process building, when a child process does
	// (Options.BuildChild); 0 when this process builds.
	PID int `json:"pid,omitempty"`
}

// Progress reports how far a build is.
type Progress struct {
	Phase string `json:"phase"` // verify, read, tables, switch, then bleve (after the generation went live)
	Kind  string `json:"kind,omitempty"`
	Done  int64  `json:"done"`
	Total int64  `json:"total"`
}

// Status reports the live generation, the last build and any build in
// progress.
func (m *Manager) Status() Status {
	var st Status
	st.Live = m.Live()
	if g := m.Acquire(); g != nil {
		st.TablesHeld, st.StoresHeld, st.TyposHeld = g.held.tables, g.held.stores, g.held.typos
		g.Release()
	}
	st.Parts = m.Parts()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last != nil {
		last := *m.last
		st.LastBuild = &last
	}
	if m.job != nil {
		r := m.job.running
		if p := m.job.progress.Load(); p != nil {
			r.Progress = *p
		}
		st.Building = &r
	}
	if m.schedule != nil {
		s := *m.schedule
		if m.cron != nil {
			s.Next = m.cron.Entry(m.cronID).Next
		}
		st.Schedule = &s
	}
	st.Failures = m.failures
	st.HeldBytes = disk.HeldBytes()
	return st
}

// Progress returns the progress of the running build, if any.
func (m *Manager) Progress() (Progress, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.job == nil {
		return Progress{}, false
	}
	if p := m.job.progress.Load(); p != nil {
		return *p, true
	}
	return Progress{}, true
}
