package indexer_test

import (
	"testing"
	"time"

	"gds/indexer"
)

// FuzzParseSchedule checks any --schedule spec: refused, or a schedule
// whose next run is after the time asked about (or zero: never).
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"0 11 * * *", "*/30 * * * *", "@hourly", "@every 6h", "@every 0s", "CRON_TZ=UTC 0 11 * * *", "TZ=", "0 0 31 2 *", "", "* * * * * *"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := indexer.ParseSchedule(spec)
		if err != nil {
			return
		}
		if next := s.Next(now); !next.IsZero() && !next.After(now) {
			t.Errorf("%q: next run %v is not after %v", spec, next, now)
		}
	})
}
