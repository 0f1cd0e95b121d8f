package reinforce

import (
	"slices"
	"testing"
	"time"

	"gds/snapshots"
)

// 2024-01-01 is a Monday, so day n of January 2024 is weekday (n-1)%7.
func at(day, hour, minute int) time.Time {
	return time.Date(2024, time.January, day, hour, minute, 0, 0, time.UTC)
}

func ptr[T any](v T) *T { return &v }

func structure(weekday, hour int) *snapshots.Structure {
	return &snapshots.Structure{ID: 1021975535893, ReinforceWeekday: weekday, ReinforceHour: hour}
}

// withChange adds a requested change to weekday/hour applying at apply.
func withChange(s *snapshots.Structure, weekday, hour int, apply time.Time) *snapshots.Structure {
	s.NextReinforceWeekday, s.NextReinforceHour, s.NextReinforceApply = ptr(weekday), ptr(hour), ptr(apply)
	return s
}

func TestPowerMode(t *testing.T) {
	svc := func(states ...string) []snapshots.Service {
		var out []snapshots.Service
		for i, s := range states {
			out = append(out, snapshots.Service{Name: string(rune('a' + i)), State: s})
		}
		return out
	}
	tests := []struct {
		name     string
		services []snapshots.Service
		want     Mode
	}{
		{"no services field", nil, LowPower},
		{"empty services", svc(), LowPower},
		{"one offline", svc("offline"), LowPower},
		{"cleanup is not online", svc("cleanup"), LowPower},
		{"all offline", svc("offline", "offline", "cleanup"), LowPower},
		{"state is case-sensitive", svc("Online"), LowPower},
		{"one online", svc("online"), FullPower},
		{"one online among offline", svc("offline", "cleanup", "online"), FullPower},
		{"all online", svc("online", "online"), FullPower},
	}
	for _, tt := range tests {
		if got := PowerMode(tt.services); got != tt.want {
			t.Errorf("%s: PowerMode = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCycles(t *testing.T) {
	tests := []struct {
		mode Mode
		want []Cycle
	}{
		{FullPower, []Cycle{{StateArmorReinforce, AnyDay}, {StateHullReinforce, OnReinforceWeekday}}},
		{LowPower, []Cycle{{StateHullReinforce, OnReinforceWeekday}}},
	}
	for _, tt := range tests {
		got := Cycles(tt.mode)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Cycles(%v) = %v, want %v", tt.mode, got, tt.want)
		}
		// Callers may change what they get without changing the rules.
		got[0].State = "changed"
		if Cycles(tt.mode)[0].State == "changed" {
			t.Errorf("Cycles(%v) shares its slice between calls", tt.mode)
		}
	}
	// Low power has one reinforcement cycle fewer, and
	// both end in the same final period.
	full, low := Cycles(FullPower), Cycles(LowPower)
	if len(full) != len(low)+1 || full[len(full)-1] != low[len(low)-1] {
		t.Errorf("low power %v is not full power %v minus its first cycle", low, full)
	}
}

func TestWeekday(t *testing.T) {
	for day := 1; day <= 14; day++ {
		d := at(day, 12, 0)
		want := (day - 1) % 7
		if got := Weekday(d); got != want {
			t.Errorf("Weekday(%s, a %s) = %d, want %d", d.Format("2006-01-02"), d.Weekday(), got, want)
		}
		if GoWeekday(want) != d.Weekday() {
			t.Errorf("GoWeekday(%d) = %v, want %v", want, GoWeekday(want), d.Weekday())
		}
	}
	if GoWeekday(0) != time.Monday || GoWeekday(6) != time.Sunday {
		t.Errorf("GoWeekday(0), GoWeekday(6) = %v, %v; want Monday, Sunday", GoWeekday(0), GoWeekday(6))
	}
	// Weekday is taken in UTC: Monday 01:00 UTC is still Sunday in New York.
	ny := at(1, 1, 0).In(time.FixedZone("UTC-5", -5*3600))
	if got := Weekday(ny); got != 0 {
		t.Errorf("Weekday of Monday 01:00 UTC seen from UTC-5 = %d, want 0", got)
	}
}

func TestWindowAround(t *testing.T) {
	tests := []struct {
		hour       int
		start, end time.Time
	}{
		{0, at(1, 22, 0).AddDate(0, 0, -1), at(2, 2, 0).AddDate(0, 0, -1)},
		{1, at(0, 23, 0), at(1, 3, 0)},
		{12, at(1, 10, 0), at(1, 14, 0)},
		{22, at(1, 20, 0), at(2, 0, 0)},
		{23, at(1, 21, 0), at(2, 1, 0)},
	}
	for _, tt := range tests {
		w := WindowAround(at(1, tt.hour, 0))
		if !w.Start.Equal(tt.start) || !w.End.Equal(tt.end) {
			t.Errorf("hour %d: window %v–%v, want %v–%v", tt.hour, w.Start, w.End, tt.start, tt.end)
		}
		if w.End.Sub(w.Start) != 4*time.Hour || !w.Centre().Equal(at(1, tt.hour, 0)) {
			t.Errorf("hour %d: window %v is not four hours centred on the hour", tt.hour, w)
		}
	}
	w := WindowAround(at(1, 12, 0))
	for _, c := range []struct {
		t    time.Time
		want bool
	}{
		{at(1, 9, 59), false}, {at(1, 10, 0), true}, {at(1, 13, 59), true}, {at(1, 14, 0), false},
	} {
		if got := w.Contains(c.t); got != c.want {
			t.Errorf("window 10:00–14:00 contains %s: %v, want %v", c.t.Format("15:04"), got, c.want)
		}
	}
}

func TestNextWindows(t *testing.T) {
	tests := []struct {
		name  string
		s     *snapshots.Structure
		now   time.Time
		first time.Time // start of FirstExit
		final time.Time // start of FinalExit
	}{
		{
			name:  "midday, final later in the week",
			s:     structure(2, 12), // Wednesday
			now:   at(1, 0, 0),
			first: at(1, 10, 0), final: at(3, 10, 0),
		},
		{
			name:  "today's window is over: tomorrow's",
			s:     structure(0, 12),
			now:   at(1, 15, 0),
			first: at(2, 10, 0), final: at(8, 10, 0), // next Monday, not Sunday the 7th
		},
		{
			name:  "weekday 6 is Sunday, not Saturday",
			s:     structure(6, 12),
			now:   at(1, 0, 0),
			first: at(1, 10, 0), final: at(7, 10, 0),
		},
		{
			name:  "weekday 0 is Monday, not Sunday",
			s:     structure(0, 12),
			now:   at(2, 0, 0),
			first: at(2, 10, 0), final: at(8, 10, 0),
		},
		{
			name:  "hour 0 opens the evening before",
			s:     structure(1, 0), // Tuesday 00:00 ± 2h
			now:   at(1, 21, 0),
			first: at(1, 22, 0), final: at(1, 22, 0),
		},
		{
			name:  "hour 0, window in progress across midnight",
			s:     structure(1, 0),
			now:   at(2, 1, 30),
			first: at(1, 22, 0), final: at(1, 22, 0),
		},
		{
			name:  "hour 0 on Monday: the window opens on Sunday",
			s:     structure(0, 0),
			now:   at(1, 3, 0), // Monday's window (Sun 22:00–Mon 02:00) is over
			first: at(1, 22, 0), final: at(7, 22, 0),
		},
		{
			name:  "hour 1 opens at 23:00 the day before",
			s:     structure(0, 1),
			now:   at(1, 0, 0),
			first: at(0, 23, 0), final: at(0, 23, 0),
		},
		{
			name:  "hour 22 closes at midnight",
			s:     structure(0, 22),
			now:   at(1, 23, 59),
			first: at(1, 20, 0), final: at(1, 20, 0),
		},
		{
			name:  "hour 22, at midnight the window is over",
			s:     structure(0, 22),
			now:   at(2, 0, 0),
			first: at(2, 20, 0), final: at(8, 20, 0),
		},
		{
			name:  "hour 23 on Monday reaches into Tuesday",
			s:     structure(0, 23),
			now:   at(2, 0, 30), // Tuesday 00:30
			first: at(1, 21, 0), final: at(1, 21, 0),
		},
		{
			name:  "hour 23 on Tuesday",
			s:     structure(1, 23),
			now:   at(2, 0, 30),
			first: at(1, 21, 0), final: at(2, 21, 0),
		},
		{
			name:  "hour 23 on Sunday wraps into the next week",
			s:     structure(6, 23),
			now:   at(8, 0, 59), // Monday 00:59: Sunday's window still open
			first: at(7, 21, 0), final: at(7, 21, 0),
		},
		{
			name:  "at the window's start it is the next window",
			s:     structure(0, 12),
			now:   at(1, 10, 0),
			first: at(1, 10, 0), final: at(1, 10, 0),
		},
		{
			name:  "at the window's end it is over",
			s:     structure(0, 12),
			now:   at(1, 14, 0),
			first: at(2, 10, 0), final: at(8, 10, 0),
		},
		{
			name:  "now in another zone means the same instant",
			s:     structure(0, 12),
			now:   at(1, 15, 0).In(time.FixedZone("UTC+10", 10*3600)), // Tuesday 01:00 local
			first: at(2, 10, 0), final: at(8, 10, 0),
		},
		{
			name:  "pending change: old schedule until it applies",
			s:     withChange(structure(0, 12), 4, 18, at(3, 12, 0)), // Friday 18:00 from Wed 12:00
			now:   at(1, 15, 0),
			first: at(2, 10, 0), // Tuesday, old hour
			final: at(5, 16, 0), // old Monday the 8th opens after the change: new Friday window
		},
		{
			name:  "pending change: an old window open when it applies runs on",
			s:     withChange(structure(0, 12), 4, 18, at(3, 12, 0)),
			now:   at(3, 12, 0),
			first: at(3, 10, 0), final: at(5, 16, 0),
		},
		{
			name:  "pending change: after the old window, the new hour",
			s:     withChange(structure(0, 12), 4, 18, at(3, 12, 0)),
			now:   at(3, 14, 0),
			first: at(3, 16, 0), final: at(5, 16, 0),
		},
		{
			name:  "pending change: a window opening exactly at apply is the new schedule's",
			s:     withChange(structure(0, 12), 4, 20, at(4, 10, 0)),
			now:   at(4, 9, 0),
			first: at(4, 18, 0), final: at(5, 18, 0),
		},
		{
			name:  "pending change: a window opening just before apply is the old schedule's",
			s:     withChange(structure(0, 12), 4, 20, at(4, 10, 0).Add(time.Nanosecond)),
			now:   at(4, 9, 0),
			first: at(4, 10, 0), final: at(5, 18, 0),
		},
		{
			name:  "change applied long ago, fields still present",
			s:     withChange(structure(0, 12), 2, 3, at(1, 0, 0).AddDate(0, -1, 0)),
			now:   at(1, 15, 0),
			first: at(2, 1, 0), final: at(3, 1, 0),
		},
		{
			name:  "requested schedule equal to the current one",
			s:     withChange(structure(0, 12), 0, 12, at(3, 12, 0)),
			now:   at(1, 15, 0),
			first: at(2, 10, 0), final: at(8, 10, 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NextWindows(tt.s, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				w    Window
				want time.Time
			}{{"FirstExit", got.FirstExit, tt.first}, {"FinalExit", got.FinalExit, tt.final}} {
				if !c.w.Start.Equal(c.want) {
					t.Errorf("%s starts %s, want %s", c.name, c.w.Start.Format(time.RFC3339), c.want.Format(time.RFC3339))
				}
				if c.w.End.Sub(c.w.Start) != 4*time.Hour || c.w.Start.Location() != time.UTC {
					t.Errorf("%s = %v, want a four-hour UTC window", c.name, c.w)
				}
			}
			if got.For(AnyDay) != got.FirstExit || got.For(OnReinforceWeekday) != got.FinalExit {
				t.Error("Windows.For does not pair exits with windows")
			}
		})
	}
}

// TestNextWindowsEverySchedule checks the invariants for every weekday and
// hour over a fortnight of starting points, quarter-hour by quarter-hour.
func TestNextWindowsEverySchedule(t *testing.T) {
	for weekday := range 7 {
		for hour := range 24 {
			s := structure(weekday, hour)
			for now := at(1, 0, 0); now.Before(at(15, 0, 0)); now = now.Add(15 * time.Minute) {
				w, err := NextWindows(s, now)
				if err != nil {
					t.Fatal(err)
				}
				first, final := w.FirstExit, w.FinalExit
				switch {
				case !first.End.After(now) || !final.End.After(now):
					t.Fatalf("%d/%02d at %s: a window is already over: %v", weekday, hour, now, w)
				case first.Centre().Hour() != hour || final.Centre().Hour() != hour:
					t.Fatalf("%d/%02d at %s: not centred on the hour: %v", weekday, hour, now, w)
				case Weekday(final.Centre()) != weekday:
					t.Fatalf("%d/%02d at %s: final window centred on weekday %d", weekday, hour, now, Weekday(final.Centre()))
				case first.Start.Sub(now) >= 24*time.Hour || final.Start.Sub(now) >= 7*24*time.Hour:
					t.Fatalf("%d/%02d at %s: skipped a window: %v", weekday, hour, now, w)
				case final.Start.Before(first.Start):
					t.Fatalf("%d/%02d at %s: final window before the first: %v", weekday, hour, now, w)
				}
				// The window just before the one returned must be over.
				if prev := first.Start.Add(-24 * time.Hour); prev.Add(4 * time.Hour).After(now) {
					t.Fatalf("%d/%02d at %s: an earlier window is still open", weekday, hour, now)
				}
			}
		}
	}
}

func TestNextWindowsRefusesBadSchedules(t *testing.T) {
	for name, s := range map[string]*snapshots.Structure{
		"hour 24":           structure(0, 24),
		"hour -1":           structure(0, -1),
		"weekday 7":         structure(7, 12),
		"weekday -1":        structure(-1, 12),
		"requested hour 24": withChange(structure(0, 12), 0, 24, at(3, 0, 0)),
		"requested day 7":   withChange(structure(0, 12), 7, 12, at(3, 0, 0)),
	} {
		if w, err := NextWindows(s, at(1, 0, 0)); err == nil {
			t.Errorf("%s: NextWindows = %v, want an error", name, w)
		}
	}
}

func TestEffectiveSchedule(t *testing.T) {
	apply := at(8, 11, 0)
	pending := func() *snapshots.Structure { return withChange(structure(0, 12), 4, 18, apply) }
	old, requested := Schedule{Weekday: 0, Hour: 12}, Schedule{Weekday: 4, Hour: 18}
	tests := []struct {
		name string
		s    *snapshots.Structure
		now  time.Time
		want Schedule
	}{
		{"nothing requested", structure(0, 12), apply.AddDate(1, 0, 0), old},
		{"long before apply", pending(), at(1, 11, 0), old},
		{"just before apply", pending(), apply.Add(-time.Nanosecond), old},
		{"at apply", pending(), apply, requested},
		{"after apply", pending(), apply.Add(time.Hour), requested},
		{"apply seen from another zone", pending(), apply.In(time.FixedZone("UTC-3", -3*3600)), requested},
		{"only the weekday requested is ignored", func() *snapshots.Structure {
			s := structure(0, 12)
			s.NextReinforceWeekday = ptr(4)
			return s
		}(), apply.Add(time.Hour), old},
		{"no apply time is ignored", func() *snapshots.Structure {
			s := pending()
			s.NextReinforceApply = nil
			return s
		}(), apply.Add(time.Hour), old},
	}
	for _, tt := range tests {
		if got := EffectiveSchedule(tt.s, tt.now); got != tt.want {
			t.Errorf("%s: EffectiveSchedule = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestApplyAt(t *testing.T) {
	tests := []struct {
		requested, want time.Time
	}{
		{at(1, 12, 0), at(8, 12, 0)},
		{at(28, 23, 59), time.Date(2024, time.February, 4, 23, 59, 0, 0, time.UTC)},
		// Leap day inside the week.
		{time.Date(2024, time.February, 26, 6, 30, 15, 0, time.UTC), time.Date(2024, time.March, 4, 6, 30, 15, 0, time.UTC)},
		// A request made in a zone that changes its clocks that week is still
		// exactly 168 hours, and the answer is in UTC.
		{time.Date(2024, time.March, 28, 12, 0, 0, 0, time.FixedZone("CET", 3600)), time.Date(2024, time.April, 4, 11, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got := ApplyAt(tt.requested)
		if !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ApplyAt(%s) = %s, want %s", tt.requested, got, tt.want)
		}
	}
	// A change applies at exactly ApplyAt: not a moment before.
	requestedAt := at(1, 9, 0)
	s := withChange(structure(0, 12), 3, 6, ApplyAt(requestedAt))
	if got := EffectiveSchedule(s, requestedAt.Add(ChangeDelay-time.Nanosecond)); got != Current(s) {
		t.Errorf("change in force %v before seven days passed", got)
	}
	if got := EffectiveSchedule(s, requestedAt.Add(ChangeDelay)); got != (Schedule{Weekday: 3, Hour: 6}) {
		t.Errorf("change not in force after seven days: %v", got)
	}
}

func TestScheduleValidate(t *testing.T) {
	for _, s := range []Schedule{{0, 0}, {6, 23}, {3, 12}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, s := range []Schedule{{-1, 0}, {7, 0}, {0, -1}, {0, 24}} {
		if err := s.Validate(); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
}

func TestStrings(t *testing.T) {
	for v, want := range map[interface{ String() string }]string{
		FullPower: "full_power", LowPower: "low_power", Mode(9): "Mode(9)",
		AnyDay: "any_day", OnReinforceWeekday: "reinforce_weekday", Exit(0): "Exit(0)",
	} {
		if got := v.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
