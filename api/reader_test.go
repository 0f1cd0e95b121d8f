package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

// memReader is a Reader over records held in memory: the handlers' side of
// the read seam without a generation on disk. It answers as query.View
// does (ErrNotFound, names and IDs by category in ESI's order, a search by
// plain case-insensitive comparison); openErr and recordErr make it fail
// as a missing or damaged generation does. It counts the Readers opened
// and closed, so a test sees every pinned generation released.
type memReader struct {
	recs      map[snapshots.Kind]map[int64]snapshots.Record
	docs      map[string]json.RawMessage
	info      query.GenerationInfo
	openErr   error // what opening answers: query.ErrNotReady, a failure
	recordErr error // what Record answers for every key: a damaged store

	opened, closed atomic.Int32
}

func newMemReader(records indexertest.Records) *memReader {
	m := &memReader{recs: map[snapshots.Kind]map[int64]snapshots.Record{}, docs: map[string]json.RawMessage{},
		info: query.GenerationInfo{ID: 7, Created: testEpoch.Add(-1), SnapshotHash: "mem"}}
	for kind, list := range records {
		m.recs[kind] = map[int64]snapshots.Record{}
		for _, r := range list {
			m.recs[kind][r.Key()] = r
			if d, ok := r.(*snapshots.Document); ok {
				m.docs[d.Path] = d.Body
			}
		}
	}
	return m
}

// open is Deps.Open.
func (m *memReader) open() (Reader, error) {
	if m.openErr != nil {
		return nil, m.openErr
	}
	m.opened.Add(1)
	return memView{m}, nil
}

type memView struct{ m *memReader }

func (v memView) Record(kind snapshots.Kind, id int64) (snapshots.Record, error) {
	if v.m.recordErr != nil {
		return nil, v.m.recordErr
	}
	if r, ok := v.m.recs[kind][id]; ok {
		return r, nil
	}
	return nil, query.ErrNotFound
}

// named lists the named records of the search categories, in ESI's order
// of categories and then by ID.
func (v memView) named(fn func(cat snapshots.Category, id int64, n snapshots.Named) bool) {
	for _, cat := range snapshots.Categories {
		recs := v.m.recs[cat.Kind()]
		for _, id := range slices.Sorted(mapKeys(recs)) {
			if n, ok := recs[id].(snapshots.Named); ok && !fn(cat, id, n) {
				return
			}
		}
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func nameIn(n snapshots.Named, lang string) string {
	if l, ok := n.LocalizedNames()[lang]; ok {
		return l
	}
	return n.DisplayName()
}

// resolveOrder is the order query.View tries categories in to name an ID.
var resolveOrder = []snapshots.Category{
	snapshots.CategoryCharacter, snapshots.CategoryCorporation, snapshots.CategoryAlliance,
	snapshots.CategoryInventoryType, snapshots.CategorySolarSystem, snapshots.CategoryStation,
	snapshots.CategoryRegion, snapshots.CategoryConstellation, snapshots.CategoryFaction,
	snapshots.CategoryAgent,
}

func (v memView) Names(ids []int64, lang string) (found []query.Named, missing []int64) {
	lang, _ = query.NormalizeLanguage(lang)
	for _, id := range ids {
		ok := false
		for _, cat := range resolveOrder {
			n, isNamed := v.m.recs[cat.Kind()][id].(snapshots.Named)
			if !isNamed {
				continue
			}
			if cat == snapshots.CategoryAgent {
				cat = snapshots.CategoryCharacter // agents are characters to ESI
			}
			found, ok = append(found, query.Named{Category: cat, ID: id, Name: nameIn(n, lang)}), true
			break
		}
		if !ok {
			missing = append(missing, id)
		}
	}
	return found, missing
}

// IDs finds each name, ignoring case, as a record's name or its name in
// lang, and reports the record's own name.
func (v memView) IDs(names []string, lang string) map[snapshots.Category][]query.Named {
	lang, _ = query.NormalizeLanguage(lang)
	out := map[snapshots.Category][]query.Named{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		v.named(func(cat snapshots.Category, id int64, n snapshots.Named) bool {
			if cat != snapshots.CategoryStructure && (strings.EqualFold(n.DisplayName(), name) || strings.EqualFold(n.LocalizedNames()[lang], name)) {
				out[cat] = append(out[cat], query.Named{Category: cat, ID: id, Name: n.DisplayName()})
			}
			return true
		})
	}
	return out
}

// Search ranks as query does: the exact name, then names starting with the
// text, then the rest; shorter names first; then lower ID.
func (v memView) Search(ctx context.Context, req query.Request) (query.Result, error) {
	text := strings.ToLower(strings.TrimSpace(req.Text))
	if len([]rune(text)) < query.MinTextRunes {
		return query.Result{}, query.ErrTextTooShort
	}
	type hit struct {
		class, length int
		id            int64
	}
	res := query.Result{IDs: map[snapshots.Category][]int64{}, Generation: v.m.info}
	for _, cat := range req.Categories {
		var hits []hit
		v.named(func(c snapshots.Category, id int64, n snapshots.Named) bool {
			name := strings.ToLower(nameIn(n, req.Language))
			switch {
			case c != cat:
			case name == text:
				hits = append(hits, hit{0, len(name), id})
			case req.Strict:
			case strings.HasPrefix(name, text):
				hits = append(hits, hit{1, len(name), id})
			case strings.Contains(name, text):
				hits = append(hits, hit{2, len(name), id})
			}
			return true
		})
		slices.SortFunc(hits, func(a, b hit) int {
			return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.length, b.length), cmp.Compare(a.id, b.id))
		})
		for _, h := range hits[:min(len(hits), query.MaxResults)] {
			res.IDs[cat] = append(res.IDs[cat], h.id)
		}
	}
	return res, ctx.Err()
}

func (v memView) Info() query.GenerationInfo { return v.m.info }
func (v memView) Close()                     { v.m.closed.Add(1) }

func (v memView) Each(kind snapshots.Kind, fn func(snapshots.Record) error) error {
	for _, id := range slices.Sorted(mapKeys(v.m.recs[kind])) {
		if err := fn(v.m.recs[kind][id]); err != nil {
			return err
		}
	}
	return nil
}

func (v memView) StructuresOf(corporation int64) ([]*snapshots.Structure, error) {
	var out []*snapshots.Structure
	err := v.Each(snapshots.Structures, func(r snapshots.Record) error {
		if st := r.(*snapshots.Structure); st.CorporationID == corporation {
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

func (v memView) Document(path string) (json.RawMessage, error) {
	if d, ok := v.m.docs[path]; ok {
		return d, nil
	}
	return nil, query.ErrNotFound
}

// newMemServer serves the API over m; opts adjust Deps as newTestServer's do.
func newMemServer(t testing.TB, m *memReader, opts ...func(*Deps)) *testServer {
	t.Helper()
	return newTestServerWith(t, Deps{Open: m.open, Logger: zerolog.New(io.Discard)}, opts...)
}

// backends serve the API over records: in a real generation, or in memory
// through the read seam. Handler tests that run over both show the fake
// keeps to query.View's contract.
var backends = map[string]func(t testing.TB, records indexertest.Records, opts ...func(*Deps)) *testServer{
	"generation": newTestServer,
	"memory": func(t testing.TB, records indexertest.Records, opts ...func(*Deps)) *testServer {
		return newMemServer(t, newMemReader(records), opts...)
	},
}

// TestHandlersOverReader drives the handlers that read a generation through
// the read seam, over records in memory: every answer, the errors of a
// generation missing or damaged, and every pinned Reader released. Where
// nothing fails, a real generation of the same records answers the same.
func TestHandlersOverReader(t *testing.T) {
	records := universeFixture()
	damaged := errors.New("record lies outside the record store's data files")
	cases := []struct {
		name      string
		method    string
		path      string
		body      string
		openErr   error
		recordErr error
		status    int
		want      string // a part of the body
	}{
		{name: "type", method: http.MethodGet, path: "/v3/universe/types/587/", status: 200, want: `"name":"Rifter"`},
		{name: "type in German", method: http.MethodGet, path: "/v3/universe/types/587/?language=de", status: 200, want: `"name":"Rifter DE"`},
		{name: "unknown type", method: http.MethodGet, path: "/v3/universe/types/9/", status: 404, want: `"Type not found"`},
		{name: "bad ID", method: http.MethodGet, path: "/v3/universe/types/x/", status: 400, want: `"error"`},
		{name: "no generation yet", method: http.MethodGet, path: "/v3/universe/types/587/", openErr: query.ErrNotReady, status: 503, want: `"error"`},
		{name: "generation fails to open", method: http.MethodGet, path: "/v3/universe/types/587/", openErr: errors.New("disk gone"), status: 500, want: `"Internal error"`},
		{name: "damaged store", method: http.MethodGet, path: "/v3/universe/types/587/", recordErr: damaged, status: 500, want: `"Internal error"`},
		{name: "names", method: http.MethodPost, path: "/v3/universe/names/", body: `[587]`, status: 200, want: `{"category":"inventory_type","id":587,"name":"Rifter"}`},
		{name: "names, one unknown", method: http.MethodPost, path: "/v3/universe/names/", body: `[587, 9]`, status: 404, want: `"Ensure all IDs are valid before resolving"`},
		{name: "names, no generation", method: http.MethodPost, path: "/v3/universe/names/", body: `[587]`, openErr: query.ErrNotReady, status: 503, want: `"error"`},
		{name: "ids", method: http.MethodPost, path: "/v1/universe/ids/", body: `["rifter"]`, status: 200, want: `"inventory_types":[{"id":587,"name":"Rifter"}]`},
		{name: "ids, none", method: http.MethodPost, path: "/v1/universe/ids/", body: `["nobody"]`, status: 200, want: `{}`},
		{name: "search", method: http.MethodGet, path: "/v2/search/?search=rift&categories=inventory_type", status: 200, want: `{"inventory_type":[587]}`},
		{name: "search, no generation", method: http.MethodGet, path: "/v2/search/?search=rift&categories=inventory_type", openErr: query.ErrNotReady, status: 503, want: `"error"`},
	}
	// The same requests over a real generation answer the same, where no
	// failure is injected: the fake keeps to query.View's contract.
	real := newTestServer(t, records)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemReader(records)
			m.openErr, m.recordErr = tc.openErr, tc.recordErr
			ts := newMemServer(t, m)
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			rec := ts.do(tc.method, tc.path, body)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%s %s = %d %s; want %d with %s", tc.method, tc.path, rec.Code, rec.Body, tc.status, tc.want)
			}
			if o, c := m.opened.Load(), m.closed.Load(); o != c {
				t.Errorf("%d Readers opened, %d closed", o, c)
			}
			if tc.openErr != nil || tc.recordErr != nil {
				return
			}
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			if want := real.do(tc.method, tc.path, body); want.Code != rec.Code || want.Body.String() != rec.Body.String() {
				t.Errorf("over a real generation %s %s = %d %s; over memory %d %s", tc.method, tc.path, want.Code, want.Body, rec.Code, rec.Body)
			}
		})
	}
}
