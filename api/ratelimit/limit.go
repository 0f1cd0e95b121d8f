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

// Bounds of a limit: a bucket must hold at least one successful answer
// (AdmitCost), and a budget beyond maxTokens is no limit worth keeping
// (a bucket counts in 16 bits per slot).
const (
	minWindow = time.Second
	maxWindow = 24 * time.Hour
	minTokens = AdmitCost
	maxTokens = 60_000
)

// check reports whether l is within the bounds ParseLimit accepts.
func (l Limit) check() error {
	if l.MaxTokens < minTokens || l.MaxTokens > maxTokens {
		return fmt.Errorf("max tokens %d: want %d to %d", l.MaxTokens, minTokens, maxTokens)
	}
	if l.Window < minWindow || l.Window > maxWindow {
		return fmt.Errorf("window %v: want %v to %v", l.Window, minWindow, maxWindow)
	}
	return nil
}

// ParseLimit reads "N/WINDOW": N tokens per WINDOW, where WINDOW is a
// whole number of seconds, minutes or hours ("1200/5m", "150/15m",
// "10/3s", "3600/1h").
func ParseLimit(s string) (Limit, error) {
	n, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Limit{}, fmt.Errorf("rate limit %q: want TOKENS/WINDOW, e.g. 1200/5m", s)
	}
	tokens, err := strconv.Atoi(n)
	if err != nil || tokens < minTokens || tokens > maxTokens {
		return Limit{}, fmt.Errorf("rate limit %q: tokens must be a whole number from %d to %d", s, minTokens, maxTokens)
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

// Spec is what gds serve --rate-limit says: budgets that replace groups'
// defaults, or Off.
type Spec struct {
	Off    bool
	Groups map[string]Limit
}

// maxGroupName bounds a group name in a spec.
const maxGroupName = 64

// ParseSpec reads a comma-separated list of GROUP=N/WINDOW
// ("search=10/3s,static-data=7200/15m"), or "off". Group names are lower
// case letters, digits and '-'; whether a group exists is the caller's to
// check.
func ParseSpec(s string) (Spec, error) {
	spec := Spec{Groups: map[string]Limit{}}
	if strings.TrimSpace(s) == "off" {
		spec.Off = true
		return spec, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, limit, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || !validGroupName(name) {
			return Spec{}, fmt.Errorf("rate limit %q: want GROUP=TOKENS/WINDOW (e.g. search=1200/5m) or off", part)
		}
		if _, dup := spec.Groups[name]; dup {
			return Spec{}, fmt.Errorf("rate limit for group %q given twice", name)
		}
		l, err := ParseLimit(limit)
		if err != nil {
			return Spec{}, fmt.Errorf("group %s: %w", name, err)
		}
		spec.Groups[name] = l
	}
	if len(spec.Groups) == 0 {
		return Spec{}, errors.New("rate limit: want GROUP=TOKENS/WINDOW,... or off")
	}
	return spec, nil
}

func validGroupName(name string) bool {
	if name == "" || len(name) > maxGroupName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
