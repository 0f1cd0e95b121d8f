package indexer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule describes the reindex schedule.
type Schedule struct {
	Spec     string    `json:"spec"`
	Snapshot string    `json:"snapshot"`
	Next     time.Time `json:"next"`
}

// ParseSchedule checks a cron spec: five fields (minute hour day-of-month
// month day-of-week) or a descriptor such as @hourly or @every 30m, in
// UTC. A time zone prefix (TZ=, CRON_TZ=) is refused: schedules are UTC,
// and the cron parser panics on some (FuzzParseSchedule found "TZ="), as
// it might on other input, which is refused too.
func ParseSchedule(spec string) (s cron.Schedule, err error) {
	if t := strings.TrimSpace(spec); strings.HasPrefix(t, "TZ=") || strings.HasPrefix(t, "CRON_TZ=") {
		return nil, errors.New("schedules are in UTC: drop the time zone")
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cannot parse %q", spec)
		}
	}()
	return cron.ParseStandard(spec)
}

// SetSchedule rebuilds from snapshot on the cron schedule spec, in UTC.
func (m *Manager) SetSchedule(spec, snapshot string) error {
	if _, err := ParseSchedule(spec); err != nil {
		return fmt.Errorf("schedule %q: %w", spec, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cron != nil {
		m.cron.Stop() // not waiting: a running job needs m.mu to finish
	}
	m.cron = cron.New(cron.WithLocation(time.UTC))
	id, err := m.cron.AddFunc(spec, func() {
		if _, err := m.Build(m.ctx, BuildRequest{Snapshot: snapshot, Trigger: "schedule"}); err != nil {
			m.log.Error().Err(err).Msg("scheduled build failed")
		}
	})
	if err != nil {
		return err
	}
	m.cronID = id
	m.schedule = &Schedule{Spec: spec, Snapshot: snapshot}
	m.cron.Start()
	return nil
}
