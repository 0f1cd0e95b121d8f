package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"gds/query"
	"gds/snapshots"
)

// The local breakdown at /local: a pasted chat member list (a textarea
// posted as a form, so it works without script) resolved in-process as
// POST /latest/local/ resolves it, shown as alliances, corporations and
// pilots with their counts and a bar chart of the largest groups. With
// script, local.js posts the text to the API instead and draws the same
// page from its answer.

// maxFormBytes bounds a posted local: 1,000 names of 100 characters, as
// the API's body limit.
const maxFormBytes = 1 << 20

// chartBars is how many of the largest groups the chart shows.
const chartBars = 8

// localData is what local.html renders.
type localData struct {
	Text    string
	Status  string
	Error   bool
	Version string
	// Result is nil until a local was posted and resolved.
	Result *localView
	// status and retryAfter are the HTTP answer's.
	status, retryAfter int
}

// localView is one resolved local.
type localView struct {
	Pilots       int
	Chart        []bar
	Alliances    []groupRow
	Corporations []groupRow
	Characters   []pilotRow
	Unknown      []string
}

// bar is one group of the chart: an alliance, or a corporation in none.
type bar struct {
	Label, Ticker, Href string
	Count, Max          int
}

// groupRow is one alliance or corporation.
type groupRow struct {
	ID                 int64
	Name, Ticker, Href string
	Count, Max         int
	Alliance           string // a corporation's alliance ticker
}

// pilotRow is one character with its affiliation.
type pilotRow struct {
	ID                         int64
	Name, Href                 string
	Corp, CorpTicker, CorpHref string
	Alliance, AllianceTicker   string
	AllianceHref               string
}

// serveLocal answers GET /local (the empty form) and POST /local (a
// pasted list, resolved).
func (h *Handler) serveLocal(c *gin.Context) {
	d := localData{status: http.StatusOK, Version: h.version,
		Status: "Paste the member list of a chat channel (in the game: select the members, Ctrl+C), one name a line."}
	if c.Request.Method == http.MethodPost {
		h.resolveLocal(c, &d)
	}
	// A posted list is not kept anywhere.
	h.html(c, h.local, d, d.status, d.retryAfter, "no-store")
}

// resolveLocal reads the posted form and resolves its names, with the
// search budget and slots the API's route spends.
func (h *Handler) resolveLocal(c *gin.Context, d *localData) {
	fail := func(status int, msg string) {
		d.Status, d.Error, d.status = msg, true, status
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxFormBytes)
	if err := c.Request.ParseForm(); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("That list is larger than %d bytes; paste at most %d names.", maxFormBytes, query.MaxLocalNames))
			return
		}
		fail(http.StatusBadRequest, "The form did not arrive whole; paste the list again.")
		return
	}
	d.Text = c.Request.PostForm.Get("names")
	if !utf8.ValidString(d.Text) {
		d.Text = strings.ToValidUTF8(d.Text, "\uFFFD")
		fail(http.StatusBadRequest, "That text holds characters no name has; copy the list again.")
		return
	}
	names, err := query.LocalLines(d.Text)
	var le *query.LineError
	switch {
	case errors.As(err, &le):
		fail(http.StatusBadRequest, fmt.Sprintf("Line %d is %s: no name is longer than %d characters.", le.Line,
			strings.TrimPrefix(le.Msg, "a name of "), query.MaxLocalNameRunes))
		return
	case errors.Is(err, query.ErrLocalTooLarge):
		fail(http.StatusBadRequest, fmt.Sprintf("That is more than %d names; a local is resolved %d names at a time.", query.MaxLocalNames, query.MaxLocalNames))
		return
	case err != nil:
		fail(http.StatusBadRequest, "There are no names in that text: paste one name a line.")
		return
	}
	v, done, no := h.admit(c)
	if no != nil {
		d.Status, d.Error, d.status, d.retryAfter = no.msg, true, no.status, no.retryAfter
		return
	}
	defer done()
	l, err := v.Local(names)
	if err != nil {
		h.d.Logger.Error().Err(err).Msg("local page: resolving names")
		fail(http.StatusInternalServerError, "Resolving the names failed on the server; try again in a moment.")
		return
	}
	d.Result = breakdown(l)
	d.Status = localSummary(d.Result)
}

// breakdown shapes an answer of View.Local for the page.
func breakdown(l query.Local) *localView {
	out := &localView{Pilots: len(l.Characters), Unknown: l.Unknown}
	corps := make(map[int64]query.LocalCorporation, len(l.Corporations))
	alliances := make(map[int64]query.LocalAlliance, len(l.Alliances))
	for _, a := range l.Alliances {
		alliances[a.AllianceID] = a
		out.Alliances = append(out.Alliances, groupRow{ID: a.AllianceID, Name: a.Name, Ticker: a.Ticker, Count: a.Count,
			Href: LookupURL(snapshots.CategoryAlliance, a.AllianceID, "en"), Max: l.Alliances[0].Count})
	}
	for _, c := range l.Corporations {
		corps[c.CorporationID] = c
		out.Corporations = append(out.Corporations, groupRow{ID: c.CorporationID, Name: c.Name, Ticker: c.Ticker, Count: c.Count,
			Href: LookupURL(snapshots.CategoryCorporation, c.CorporationID, "en"), Max: l.Corporations[0].Count,
			Alliance: alliances[c.AllianceID].Ticker})
	}
	for _, ch := range l.Characters {
		p := pilotRow{ID: ch.CharacterID, Name: ch.Name, Href: LookupURL(snapshots.CategoryCharacter, ch.CharacterID, "en"),
			Corp: corps[ch.CorporationID].Name, CorpTicker: corps[ch.CorporationID].Ticker,
			CorpHref: LookupURL(snapshots.CategoryCorporation, ch.CorporationID, "en")}
		if a, ok := alliances[ch.AllianceID]; ok {
			p.Alliance, p.AllianceTicker = a.Name, a.Ticker
			p.AllianceHref = LookupURL(snapshots.CategoryAlliance, a.AllianceID, "en")
		}
		out.Characters = append(out.Characters, p)
	}
	out.Chart = chart(l)
	return out
}

// chart is the largest groups: alliances, and corporations in none, by
// pilots (most first; ties by name).
func chart(l query.Local) []bar {
	var bars []bar
	for _, a := range l.Alliances {
		bars = append(bars, bar{Label: a.Name, Ticker: "<" + a.Ticker + ">", Count: a.Count, Href: LookupURL(snapshots.CategoryAlliance, a.AllianceID, "en")})
	}
	for _, c := range l.Corporations {
		if c.AllianceID == 0 {
			bars = append(bars, bar{Label: c.Name, Ticker: "[" + c.Ticker + "]", Count: c.Count, Href: LookupURL(snapshots.CategoryCorporation, c.CorporationID, "en")})
		}
	}
	slices.SortFunc(bars, func(a, b bar) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Label, b.Label))
	})
	bars = bars[:min(len(bars), chartBars)]
	for i := range bars {
		bars[i].Max = bars[0].Count
	}
	return bars
}

// localSummary is the status line of a resolved local.
func localSummary(v *localView) string {
	s := fmt.Sprintf("%d %s in %d %s and %d %s.", v.Pilots, plural(v.Pilots, "pilot", "pilots"),
		len(v.Corporations), plural(len(v.Corporations), "corporation", "corporations"),
		len(v.Alliances), plural(len(v.Alliances), "alliance", "alliances"))
	if n := len(v.Unknown); n > 0 {
		s += fmt.Sprintf(" %d %s no pilot's.", n, plural(n, "name is", "names are"))
	}
	return s
}

// affiliation is what a character's search result shows of its
// corporation and alliance.
type affiliation struct {
	Corp, CorpTicker         string
	Alliance, AllianceTicker string
}

// addAffiliations names the corporation and alliance of each character
// the groups show, with one LocalOf call; a failure leaves them out (the
// results are still right).
func addAffiliations(v *query.View, gs []group) {
	var ids []int64
	for _, g := range gs {
		if g.Cat != snapshots.CategoryCharacter {
			continue
		}
		for _, it := range g.Items {
			ids = append(ids, it.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	l, err := v.LocalOf(ids)
	if err != nil {
		return
	}
	corps := make(map[int64]query.LocalCorporation, len(l.Corporations))
	for _, c := range l.Corporations {
		corps[c.CorporationID] = c
	}
	alliances := make(map[int64]query.LocalAlliance, len(l.Alliances))
	for _, a := range l.Alliances {
		alliances[a.AllianceID] = a
	}
	of := make(map[int64]*affiliation, len(l.Characters))
	for _, ch := range l.Characters {
		c, a := corps[ch.CorporationID], alliances[ch.AllianceID]
		of[ch.CharacterID] = &affiliation{Corp: c.Name, CorpTicker: c.Ticker, Alliance: a.Name, AllianceTicker: a.Ticker}
	}
	for gi := range gs {
		if gs[gi].Cat != snapshots.CategoryCharacter {
			continue
		}
		for i := range gs[gi].Items {
			gs[gi].Items[i].Aff = of[gs[gi].Items[i].ID]
		}
	}
}
