package api

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"gds/api/esierr"
	"gds/api/web"
)

// Compatibility dates address a route without a version prefix, as today's
// ESI clients do: the request names a day (X-Compatibility-Date or the
// compatibility_date query parameter) and gets the route version that was
// in force on it. The dates are derived from the route table's lifecycles;
// nothing here is a second table.

const (
	// HeaderCompatibilityDate carries the requested date and, on answers,
	// the listed date it resolved to.
	HeaderCompatibilityDate = "X-Compatibility-Date"
	queryCompatibilityDate  = "compatibility_date"
	// HeaderTenant names the tenant; tranquility is the only one.
	HeaderTenant = "X-Tenant"
	// apiDayStart is when ESI's API date changes: at 10:59 UTC on day D
	// "today" is still D-1.
	apiDayStart = 11 * time.Hour
)

// apiToday is the API's date at now: the UTC date of now minus 11 hours.
func apiToday(now time.Time) time.Time { return dayOf(now.UTC().Add(-apiDayStart)) }

// dayOf is t's UTC date at 00:00.
func dayOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// ceilDay is the first 00:00 UTC at or after t: a moment within a day
// takes effect for compatibility dates on the next one, so evaluating a
// date at its 00:00 always sees the change.
func ceilDay(t time.Time) time.Time {
	d := dayOf(t)
	if d.Before(t) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// changeDates are the days on which a route version became latest, legacy
// or was removed, ascending and distinct (dev periods do not change what
// a date resolves to).
func changeDates(routes []Route) []time.Time {
	var out []time.Time
	for _, r := range routes {
		for _, v := range r.Versions {
			for _, m := range []time.Time{v.Lifecycle.Latest, v.Lifecycle.Legacy, v.Lifecycle.Removed} {
				if !m.IsZero() && !slices.ContainsFunc(out, ceilDay(m).Equal) {
					out = append(out, ceilDay(m))
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// compatDates are the change dates up to the API's today.
func (s *server) compatDates() []time.Time {
	today := apiToday(s.now())
	i, _ := slices.BinarySearchFunc(s.dates, today, func(a, b time.Time) int { return a.Compare(b) })
	if i < len(s.dates) && s.dates[i].Equal(today) {
		i++
	}
	return s.dates[:i]
}

// resolveDate rounds day down to the newest listed date at or before it;
// a day after today or before the first listed date is an error naming
// the valid range.
func (s *server) resolveDate(day time.Time) (time.Time, error) {
	dates := s.compatDates()
	today := apiToday(s.now())
	if len(dates) == 0 {
		return time.Time{}, fmt.Errorf("no compatibility date is valid yet")
	}
	if day.After(today) || day.Before(dates[0]) {
		return time.Time{}, fmt.Errorf("compatibility date %s is out of range: valid dates are %s to %s",
			day.Format(time.DateOnly), dates[0].Format(time.DateOnly), today.Format(time.DateOnly))
	}
	i := sort.Search(len(dates), func(i int) bool { return dates[i].After(day) })
	return dates[i-1], nil
}

// requestedDate reads the request's compatibility date, resolved to a
// listed date; given is false when the request names none. A bad date is
// answered 400 here and ok is false.
func (s *server) requestedDate(c *gin.Context) (date time.Time, given, ok bool) {
	raw := c.GetHeader(HeaderCompatibilityDate)
	name := HeaderCompatibilityDate
	if q, present, qok := queryParam(c, queryCompatibilityDate); !qok {
		return time.Time{}, true, false
	} else if present {
		if raw != "" && raw != q {
			badHeader(c, HeaderCompatibilityDate, raw, fmt.Sprintf("%s %s and %s %s disagree: send one",
				HeaderCompatibilityDate, quote(raw), queryCompatibilityDate, quote(q)))
			return time.Time{}, true, false
		}
		raw, name = q, queryCompatibilityDate
	}
	if raw == "" {
		return time.Time{}, false, true
	}
	day, err := time.Parse(time.DateOnly, raw)
	if err != nil {
		badDate(c, name, raw, fmt.Sprintf("%s: %s is not a date YYYY-MM-DD", name, quote(raw)))
		return time.Time{}, true, false
	}
	date, err = s.resolveDate(day)
	if err != nil {
		badDate(c, name, raw, name+": "+err.Error())
		return time.Time{}, true, false
	}
	return date, true, true
}

// badDate refuses the compatibility date raw, given as name (the header or
// the query parameter).
func badDate(c *gin.Context, name, raw, msg string) {
	if name == HeaderCompatibilityDate {
		badHeader(c, name, raw, msg)
		return
	}
	writeErrorDetails(c, http.StatusBadRequest, msg, esierr.Detail{Location: "query." + name, Message: msg, Value: raw})
}

// inForce is the version of r in force on date: the newest one labelled
// latest that day, else the newest still served as legacy; nil when the
// route was not released yet or already removed.
func (r *Route) inForce(date time.Time) (*Version, Phase) {
	var best *Version
	var bestPhase Phase
	rank := map[Phase]int{PhaseLatest: 3, PhaseSuperseded: 2, PhaseLegacy: 1}
	for i := range r.Versions {
		v := &r.Versions[i]
		p := r.Phase(v.N, date)
		if rank[p] == 0 {
			continue
		}
		if best == nil || rank[p] > rank[bestPhase] || (rank[p] == rank[bestPhase] && v.N > best.N) {
			best, bestPhase = v, p
		}
	}
	return best, bestPhase
}

// unversioned answers a path without a version prefix: by compatibility
// date when the request names one (versioned is the table's route there,
// nil when none), else the older interface's route (older, nil when none).
func (s *server) unversioned(versioned, older *Route) gin.HandlerFunc {
	var olderHandler gin.HandlerFunc
	if older != nil {
		olderHandler = s.dispatch(older, "")
	}
	var rg *rateGroup
	if versioned != nil {
		rg = s.rateGroupOf(versioned)
	}
	return func(c *gin.Context) {
		// The answer depends on the date (and on the tenant, as ESI's
		// dated interface says), answers without one included: a shared
		// cache must key on both.
		h := c.Writer.Header()
		addVary(h, HeaderCompatibilityDate)
		addVary(h, HeaderTenant)
		date, given, ok := s.requestedDate(c)
		switch {
		case !ok:
			return
		case !given && olderHandler != nil:
			// The older interface's structures routes keep the spec's
			// behaviour: answered as they were, without a date.
			olderHandler(c)
			return
		case !given:
			// As ESI does today: no date is the oldest listed one.
			dates := s.compatDates()
			if len(dates) == 0 {
				writeError(c, http.StatusNotFound, "Not found: name a version prefix (/latest/) or send "+HeaderCompatibilityDate)
				return
			}
			date = dates[0]
		}
		day := date.Format(time.DateOnly)
		c.Header(HeaderCompatibilityDate, day)
		var v *Version
		var phase Phase
		if versioned != nil {
			v, phase = versioned.inForce(date)
		}
		if v == nil {
			writeError(c, http.StatusNotFound, "This route does not exist on compatibility date "+day)
			return
		}
		s.serve(c, rg, versioned, v, phase)
	}
}

// registerUnversioned adds every path of the table without prefix, with
// and without its trailing slash, each answering by compatibility date
// (and the older interface's routes as before when no date is named).
func (s *server) registerUnversioned(e *gin.Engine) {
	type pair struct{ versioned, older *Route }
	byKey := map[string]*pair{}
	var keys []string
	for i := range s.routes {
		r := &s.routes[i]
		k := r.Method + " " + r.Path
		p := byKey[k]
		if p == nil {
			p = &pair{}
			byKey[k] = p
			keys = append(keys, k)
		}
		if r.Unversioned {
			p.older = r
		} else {
			p.versioned = r
		}
	}
	for _, k := range keys {
		method, path, _ := strings.Cut(k, " ")
		h := s.unversioned(byKey[k].versioned, byKey[k].older)
		e.Handle(method, ginPath(path), h)
		// Without its slash, a path the search page serves is the page's
		// (POST /local is its form; POST /local/ the API's route).
		if trimmed := strings.TrimSuffix(path, "/"); trimmed != path && trimmed != "" && !slices.Contains(web.Paths, trimmed) {
			e.Handle(method, ginPath(trimmed), h)
		}
	}
}

// tenant refuses any tenant but tranquility, by X-Tenant or the older
// datasource parameter, on every route.
func tenant(c *gin.Context) {
	if t := c.GetHeader(HeaderTenant); t != "" && t != Datasource {
		badHeader(c, HeaderTenant, t, fmt.Sprintf("%s: %s is not a tenant here; the only one is %s",
			HeaderTenant, quote(t), Datasource))
		return
	}
	// Parsed only when named: a page that reads no query must not answer
	// 400 to a malformed one.
	if strings.Contains(c.Request.URL.RawQuery, "datasource") {
		parseDatasource(c)
	}
}

// CompatibilityDates is the answer of GET /meta/compatibility-dates.
type CompatibilityDates struct {
	CompatibilityDates []string `json:"compatibility_dates"`
}

// ChangelogEntry is one route version named in the changelog, as in
// status.json: route is its path under its /vN/ prefix (no prefix for the
// older interface).
type ChangelogEntry struct {
	Method string `json:"method"`
	Route  string `json:"route"`
}

// ChangelogDay is what changed on one compatibility date. A date is
// breaking when a route version was removed or an unprefixed path now
// resolves to another version than the day before.
type ChangelogDay struct {
	Date       string           `json:"date"`
	Appeared   []ChangelogEntry `json:"appeared"`
	Legacy     []ChangelogEntry `json:"legacy"`
	Removed    []ChangelogEntry `json:"removed"`
	IsBreaking bool             `json:"is_breaking"`
}

// Changelog is the answer of GET /meta/changelog, oldest date first.
type Changelog struct {
	Changelog []ChangelogDay `json:"changelog"`
}

func formatDates(ds []time.Time) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Format(time.DateOnly)
	}
	return out
}

// changelog derives the changes of every listed date from the lifecycles.
func (s *server) changelog() Changelog {
	out := Changelog{Changelog: []ChangelogDay{}}
	var prev time.Time
	for _, d := range s.compatDates() {
		day := ChangelogDay{Date: d.Format(time.DateOnly),
			Appeared: []ChangelogEntry{}, Legacy: []ChangelogEntry{}, Removed: []ChangelogEntry{}}
		for i := range s.routes {
			r := &s.routes[i]
			for _, v := range r.Versions {
				e := ChangelogEntry{Method: strings.ToLower(r.Method), Route: r.Path}
				if !r.Unversioned {
					e.Route = fmt.Sprintf("/v%d%s", v.N, r.Path)
				}
				on := func(m time.Time) bool { return !m.IsZero() && ceilDay(m).Equal(d) }
				if on(v.Lifecycle.Latest) {
					day.Appeared = append(day.Appeared, e)
				}
				if on(v.Lifecycle.Legacy) {
					day.Legacy = append(day.Legacy, e)
				}
				if on(v.Lifecycle.Removed) {
					day.Removed = append(day.Removed, e)
					day.IsBreaking = true
				}
			}
			if !r.Unversioned && !prev.IsZero() {
				before, _ := r.inForce(prev)
				after, _ := r.inForce(d)
				if before != nil && before != after {
					day.IsBreaking = true
				}
			}
		}
		out.Changelog = append(out.Changelog, day)
		prev = d
	}
	return out
}

// registerCompatMeta adds GET /meta/compatibility-dates and
// /meta/changelog.
func (s *server) registerCompatMeta(e *gin.Engine) {
	e.GET("/meta/compatibility-dates", func(c *gin.Context) {
		s.sendValidated(c, CompatibilityDates{CompatibilityDates: formatDates(s.compatDates())})
	})
	e.GET("/meta/changelog", func(c *gin.Context) { s.sendValidated(c, s.changelog()) })
}
