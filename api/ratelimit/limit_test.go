package ratelimit

import (
	"testing"
	"time"
)

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]Limit{
		"1200/5m": {1200, 5 * time.Minute},
		"150/15m": {150, 15 * time.Minute},
		"10/3s":   {10, 3 * time.Second},
		"3600/1h": {3600, time.Hour},
		" 5/90s ": {5, 90 * time.Second},
	} {
		got, err := ParseLimit(in)
		if err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "10/", "/5m", "0/5m", "-1/5m", "10/0m", "10/5", "10/5d", "10/m",
		"10/-5m", "10/+5m", "10/25h", "x/5m", "10/5M", "99999999999/5m", "10/5m/3"} {
		if l, err := ParseLimit(in); err == nil {
			t.Errorf("ParseLimit(%q) = %v, want an error", in, l)
		}
	}
}

func TestLimitString(t *testing.T) {
	for l, want := range map[Limit]string{
		{150, 15 * time.Minute}:       "150/15m",
		{1200, 5 * time.Minute}:       "1200/5m",
		{3600, time.Hour}:             "3600/1h",
		{10, 3 * time.Second}:         "10/3s",
		{10, 90 * time.Second}:        "10/90s",
		{10, 120 * time.Minute}:       "10/2h",
		{10, 1500 * time.Millisecond}: "10/2s",
	} {
		if got := l.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", l, got, want)
		}
	}
}
