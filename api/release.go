package api

import "time"

// DefaultReleaseDay is the release day used when Deps.ReleaseDay is zero: a
// day in the past, so a server started without one serves the released
// interface (v2 latest, v1 legacy, PUT removed).
var DefaultReleaseDay = time.Date(2018, 10, 16, 0, 0, 0, 0, time.UTC)

// Lifecycle offsets relative to the release day (docs/api.md, Corporation
// structures).
const (
	// putGrace is how long the v1 PUT stays as legacy before it is
	// removed: "two weeks later the route is removed".
	putGrace = 14 * 24 * time.Hour
	// longBefore places the "since always" moments before a release day
	// that is itself before tableOrigin.
	longBefore = 10 * 365 * 24 * time.Hour
)

// tableOrigin is when every route version that was never introduced later
// became latest: the first compatibility date. A fixed day, so the list of
// dates does not move with --release-day.
var tableOrigin = time.Date(2017, time.January, 1, 0, 0, 0, 0, time.UTC)

// releaseDay is the release day at 00:00 UTC: the label changes happen as
// the day starts, whatever time of day Deps.ReleaseDay carries.
func (s *server) releaseDay() time.Time {
	d := s.d.ReleaseDay
	if d.IsZero() {
		d = DefaultReleaseDay
	}
	d = d.UTC()
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}

// releaseLifecycles are the lifecycles of every route version the release
// touches, all derived from the one release day so nothing about a
// transition is written twice.
type releaseLifecycles struct {
	// ListV1 is the old structures list: latest, then legacy only.
	ListV1 Lifecycle
	// ListV2 is the new structures list: dev (disabled), then latest.
	ListV2 Lifecycle
	// PutV1 sets the old vulnerability windows: latest, legacy for two
	// weeks (204 always), then removed.
	PutV1 Lifecycle
	// Older is the older interface's two routes: served until the release
	// day, removed on it.
	Older Lifecycle
	// Current is every other route: latest since long before and staying.
	Current Lifecycle
}

func (s *server) lifecycles() releaseLifecycles {
	day := s.releaseDay()
	before := tableOrigin
	if !day.After(before) {
		before = day.Add(-longBefore)
	}
	return releaseLifecycles{
		ListV1:  Lifecycle{Latest: before, Legacy: day},
		ListV2:  Lifecycle{Dev: before, Latest: day},
		PutV1:   Lifecycle{Latest: before, Legacy: day, Removed: day.Add(putGrace)},
		Older:   Lifecycle{Latest: before, Removed: day},
		Current: Lifecycle{Latest: before},
	}
}
