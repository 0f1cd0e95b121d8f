// Package ratelimit holds ESI's floating-window rate limits: a token
// bucket per (group, client) whose spent tokens come back one window later.
package ratelimit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limit is a group's budget: MaxTokens spent per floating Window.
type Limit struct {
	MaxTokens int
	Window    time.Duration
}

// String is the X-Ratelimit-Limit value, "150/15m" as ESI writes it.
func (l Limit) String() string {
	return strconv.Itoa(l.MaxTokens) + "/" + FormatWindow(l.Window)
}

// FormatWindow writes a window as ESI does ("15m", "1h"), in the largest
// unit that divides it; windows shorter than a minute (tests) use "s".
func FormatWindow(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10) + "s"
}

// Bounds of a limit: a window is counted in whole seconds, and a budget
// beyond maxTokens is no limit at all.
const (
	minWindow = time.Second
	maxWindow = 24 * time.Hour
	maxTokens = 1 << 30
)

// ParseLimit reads "N/WINDOW": N tokens per WINDOW, where WINDOW is a
// whole number of seconds, minutes or hours ("1200/5m", "150/15m",
// "10/3s", "3600/1h").
func ParseLimit(s string) (Limit, error) {
	n, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Limit{}, fmt.Errorf("rate limit %q: want TOKENS/WINDOW, e.g. 1200/5m", s)
	}
	tokens, err := strconv.Atoi(n)
	if err != nil || tokens < 1 || tokens > maxTokens {
		return Limit{}, fmt.Errorf("rate limit %q: tokens must be a whole number from 1 to %d", s, maxTokens)
	}
	window, err := parseWindow(w)
	if err != nil {
		return Limit{}, fmt.Errorf("rate limit %q: %w", s, err)
	}
	return Limit{MaxTokens: tokens, Window: window}, nil
}

var errWindow = errors.New("window must be a whole number of seconds (s), minutes (m) or hours (h), from 1s to 24h")

func parseWindow(w string) (time.Duration, error) {
	if len(w) < 2 {
		return 0, errWindow
	}
	var unit time.Duration
	switch w[len(w)-1] {
	case 's':
		unit = time.Second
	case 'm':
		unit = time.Minute
	case 'h':
		unit = time.Hour
	default:
		return 0, errWindow
	}
	n, err := strconv.Atoi(w[:len(w)-1])
	if err != nil || n < 1 || n > int(maxWindow/unit) || w[0] == '+' {
		return 0, errWindow
	}
	return time.Duration(n) * unit, nil
}
