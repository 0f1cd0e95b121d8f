// Package reinforce holds the reinforcement rules for player
// structures: full or low power from the services, the four-hour windows
// around reinforce_hour in which a structure leaves reinforcement, the
// reinforced states it passes through, and when a requested change of
// reinforce_weekday and reinforce_hour takes effect.
//
// Every function takes the time it reasons about; nothing here reads the
// clock. All results are in UTC, as ESI's reinforce_hour is.
package reinforce

import (
	"fmt"
	"time"

	"gds/snapshots"
)

// Mode is a structure's power mode. It is not a returned field: clients
// derive it from the services: full power with at least one online
// service, low power otherwise (docs/api.md, Corporation structures).
type Mode int

const (
	// LowPower: no service online. One reinforcement cycle fewer.
	LowPower Mode = iota
	// FullPower: at least one service online.
	FullPower
)

func (m Mode) String() string {
	switch m {
	case LowPower:
		return "low_power"
	case FullPower:
		return "full_power"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ServiceOnline is the service state that keeps a structure in full power.
const ServiceOnline = "online"

// PowerMode is FullPower when at least one service is online, else
// LowPower (offline and cleanup services do not count).
func PowerMode(services []snapshots.Service) Mode {
	for _, s := range services {
		if s.State == ServiceOnline {
			return FullPower
		}
	}
	return LowPower
}

// State identifiers of the reinforcement cycle, as ESI spells them.
const (
	StateShieldVulnerable = "shield_vulnerable"
	StateArmorReinforce   = "armor_reinforce"
	StateHullReinforce    = "hull_reinforce"
)

// Exit says which windows can end a reinforcement period.
type Exit int

const (
	// AnyDay: the window around reinforce_hour on any day (the first
	// reinforcement, in the defenders' time zone on the attackers' day).
	AnyDay Exit = iota + 1
	// OnReinforceWeekday: the window around reinforce_hour on
	// reinforce_weekday only (the final reinforcement, on the defenders' day).
	OnReinforceWeekday
)

func (e Exit) String() string {
	switch e {
	case AnyDay:
		return "any_day"
	case OnReinforceWeekday:
		return "reinforce_weekday"
	}
	return fmt.Sprintf("Exit(%d)", int(e))
}

// Cycle is one reinforcement period: the state the structure is in, and
// which windows end it.
type Cycle struct {
	State string
	Exit  Exit
}

// Cycles returns the reinforced states a structure in mode m passes through,
// in order, once its shield hitpoints reach 0. Full power has the extra
// first (armor) cycle; low power goes straight to the final (hull) one.
func Cycles(m Mode) []Cycle {
	final := Cycle{State: StateHullReinforce, Exit: OnReinforceWeekday}
	if m == FullPower {
		return []Cycle{{State: StateArmorReinforce, Exit: AnyDay}, final}
	}
	return []Cycle{final}
}

// Weekday is t's day of the week as ESI numbers it: 0 is Monday, 6 Sunday
// (Go's time.Weekday starts at Sunday = 0). t is taken in UTC.
func Weekday(t time.Time) int {
	return (int(t.UTC().Weekday()) + 6) % 7
}

// GoWeekday converts an ESI weekday (0 = Monday) to Go's time.Weekday.
func GoWeekday(d int) time.Weekday {
	return time.Weekday((d + 1) % 7)
}

// HalfWidth is how far a window reaches each side of reinforce_hour.
const HalfWidth = 2 * time.Hour

// Window is a span of time [Start, End) in UTC: a structure leaves
// reinforcement at a random moment within it.
type Window struct {
	Start, End time.Time
}

// WindowAround is the four-hour window centred on centre.
func WindowAround(centre time.Time) Window {
	c := centre.UTC()
	return Window{Start: c.Add(-HalfWidth), End: c.Add(HalfWidth)}
}

// Centre is the moment the window is centred on: reinforce_hour o'clock.
func (w Window) Centre() time.Time { return w.Start.Add(HalfWidth) }

// Contains reports whether t falls in the window.
func (w Window) Contains(t time.Time) bool {
	return !t.Before(w.Start) && t.Before(w.End)
}

// IsZero reports whether w is the zero Window.
func (w Window) IsZero() bool { return w.Start.IsZero() && w.End.IsZero() }

// Schedule is when a structure's windows are: reinforce_weekday (0 =
// Monday … 6 = Sunday) and reinforce_hour (0–23, UTC).
type Schedule struct {
	Weekday int
	Hour    int
}

// Validate checks the ranges ESI allows.
func (s Schedule) Validate() error {
	if s.Weekday < 0 || s.Weekday > 6 {
		return fmt.Errorf("reinforce_weekday: must be 0 (Monday) to 6 (Sunday), got %d", s.Weekday)
	}
	if s.Hour < 0 || s.Hour > 23 {
		return fmt.Errorf("reinforce_hour: must be 0 to 23, got %d", s.Hour)
	}
	return nil
}

// ChangeDelay is how long a requested change of the schedule takes to apply
// (seven days; docs/api.md, Corporation structures).
const ChangeDelay = 7 * 24 * time.Hour

// ApplyAt is when a change requested at requestedAt takes effect: the
// next_reinforce_apply to publish.
func ApplyAt(requestedAt time.Time) time.Time {
	return requestedAt.UTC().Add(ChangeDelay)
}

// Current is the schedule in s's reinforce_weekday and reinforce_hour.
func Current(s *snapshots.Structure) Schedule {
	return Schedule{Weekday: s.ReinforceWeekday, Hour: s.ReinforceHour}
}

// Requested returns the schedule requested in s's next_reinforce_* fields
// and when it applies; ok is false unless all three are set.
func Requested(s *snapshots.Structure) (sch Schedule, apply time.Time, ok bool) {
	if s.NextReinforceWeekday == nil || s.NextReinforceHour == nil || s.NextReinforceApply == nil {
		return Schedule{}, time.Time{}, false
	}
	return Schedule{Weekday: *s.NextReinforceWeekday, Hour: *s.NextReinforceHour}, s.NextReinforceApply.UTC(), true
}

// EffectiveSchedule is the schedule in force at now: the requested one once
// now reaches next_reinforce_apply, the current one before (or when nothing
// is requested).
func EffectiveSchedule(s *snapshots.Structure, now time.Time) Schedule {
	if req, apply, ok := Requested(s); ok && !now.Before(apply) {
		return req
	}
	return Current(s)
}

// Windows are a structure's next windows for each kind of exit.
type Windows struct {
	// FirstExit is when a first (armor) reinforcement can end: the next
	// window around reinforce_hour, any day.
	FirstExit Window
	// FinalExit is when the final (hull) reinforcement can end: the next
	// window around reinforce_hour on reinforce_weekday.
	FinalExit Window
}

// For returns the window that ends a cycle with exit e.
func (w Windows) For(e Exit) Window {
	if e == AnyDay {
		return w.FirstExit
	}
	return w.FinalExit
}

// NextWindows returns s's next windows at now. "Next" is the first window
// not yet over, so a window in progress counts. A window follows the
// schedule in force when it opens: with a change pending, windows opening
// before next_reinforce_apply keep the old schedule, those opening at or
// after it use the new one.
func NextWindows(s *snapshots.Structure, now time.Time) (Windows, error) {
	now = now.UTC()
	// Each schedule that may govern a window, and where to start looking:
	// the requested schedule opens no window before it applies.
	type source struct {
		sch  Schedule
		from time.Time
	}
	sources := []source{{Current(s), now}}
	if req, apply, ok := Requested(s); ok {
		sources = append(sources, source{req, latest(now, apply)})
	}
	for _, src := range sources {
		if err := src.sch.Validate(); err != nil {
			return Windows{}, fmt.Errorf("structure %d: %w", s.ID, err)
		}
	}
	var out Windows
	for _, exit := range []Exit{AnyDay, OnReinforceWeekday} {
		var best Window
		for _, src := range sources {
			w := firstWindow(src.sch, exit, src.from, func(w Window) bool {
				return w.End.After(now) && EffectiveSchedule(s, w.Start) == src.sch
			})
			if !w.IsZero() && (best.IsZero() || w.Start.Before(best.Start)) {
				best = w
			}
		}
		if best.IsZero() {
			// Unreachable for a valid schedule: every week has a window.
			return Windows{}, fmt.Errorf("structure %d: no %s window found after %s", s.ID, exit, now.Format(time.RFC3339))
		}
		if exit == AnyDay {
			out.FirstExit = best
		} else {
			out.FinalExit = best
		}
	}
	return out, nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// scanDays covers a window centred the day before from (it may still be
// open: hour 23 reaches into the next day, hour 0 starts the day before)
// and then a full week and a day.
const scanDays = 9

// firstWindow returns sch's earliest window for exit, among those centred
// from the day before from on, that ok accepts; the zero Window if none.
func firstWindow(sch Schedule, exit Exit, from time.Time, ok func(Window) bool) Window {
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	for i := range scanDays {
		d := day.AddDate(0, 0, i)
		if exit == OnReinforceWeekday && Weekday(d) != sch.Weekday {
			continue
		}
		w := WindowAround(d.Add(time.Duration(sch.Hour) * time.Hour))
		if ok(w) {
			return w
		}
	}
	return Window{}
}
