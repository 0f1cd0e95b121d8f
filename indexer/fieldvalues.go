package indexer

import (
	"slices"
	"strconv"
	"time"

	bdoc "github.com/blevesearch/bleve/v2/document"

	"gds/snapshots"
)

// The attribute fields an analysts' query returns (fields=) are not
// stored in bleve: they come from the record, which the generation's
// record store holds, computed as the build computed the document's
// attributes. bleve stored them for every document (a fifth of the
// character shards, with a date's layout string in each), where an answer
// needs them for its hits only.

// FieldValues returns the named attribute fields of rec's document as
// bleve returns the fields it stores: keywords as text (IDs in decimal),
// numbers as float64, instants as RFC 3339 text in UTC, and a field of
// several values (service) as a []any of them in order. Fields without a
// value are left out, as are instants bleve cannot index.
func (g *Generation) FieldValues(rec snapshots.Record, names []string) map[string]any {
	out := map[string]any{}
	for _, a := range attributes(rec, g.universe()) {
		f := &attributeFields[a.field]
		if !slices.Contains(names, f.Name) {
			continue
		}
		var v any
		switch {
		case f.Type == Numeric:
			v = a.num
		case f.Type == DateTime:
			t := time.Unix(int64(a.num), 0).UTC()
			if _, err := bdoc.NewDateTimeField(f.Name, nil, t, time.RFC3339); err != nil {
				continue // beyond what bleve represents: not in the document
			}
			v = t.Format(time.RFC3339)
		case a.str != "":
			v = a.str
		default:
			v = strconv.FormatInt(int64(a.num), 10)
		}
		switch prev := out[f.Name].(type) {
		case nil:
			out[f.Name] = v
		case []any:
			out[f.Name] = append(prev, v)
		default:
			out[f.Name] = []any{prev, v}
		}
	}
	return out
}

// universe is the generation's map of systems to regions, read from its
// record stores on first use (a few thousand records), for the derived
// fields of FieldValues.
func (g *Generation) universe() *universe {
	g.univOnce.Do(func() {
		u := &universe{constellation: map[int64]int64{}, region: map[int64]int64{}}
		each := func(k snapshots.Kind, fn func(snapshots.Record)) {
			s := g.Store(k)
			if s == nil {
				return
			}
			for i := range s.Len() {
				rec := k.New()
				if s.Read(i, func(raw []byte) error { return snapshots.DecodeRecord(raw, rec) }) == nil {
					fn(rec)
				}
			}
		}
		each(snapshots.Constellations, func(r snapshots.Record) {
			c := r.(*snapshots.Constellation)
			u.region[c.ID] = c.RegionID
		})
		each(snapshots.SolarSystems, func(r snapshots.Record) {
			s := r.(*snapshots.SolarSystem)
			u.constellation[s.ID] = s.ConstellationID
		})
		g.univ = u
	})
	return g.univ
}
