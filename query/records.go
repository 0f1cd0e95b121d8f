package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer"
	"gds/indexer/affcol"
	"gds/indexer/nametable"
	"gds/indexer/recstore"
	"gds/snapshots"
)

// Record returns the record of kind with key id, decoded, or ErrNotFound.
func (v *View) Record(kind snapshots.Kind, id int64) (snapshots.Record, error) {
	return RecordOf(v.g, kind, id)
}

// RecordOf decodes the record of that kind and key from g's record store,
// which the caller holds (as View.Record does for the view's generation).
func RecordOf(g *indexer.Generation, kind snapshots.Kind, id int64) (snapshots.Record, error) {
	s := g.Store(kind)
	if s == nil {
		return nil, ErrNotFound
	}
	rec := kind.New()
	ok, err := s.Get(id, func(raw []byte) error { return snapshots.DecodeRecord(raw, rec) })
	if err := recordErr(kind, id, ok, err); err != nil {
		return nil, err
	}
	return rec, nil
}

// recordErr words what a store's Get answered.
func recordErr(kind snapshots.Kind, id int64, ok bool, err error) error {
	switch {
	case !ok:
		return ErrNotFound
	case errors.Is(err, recstore.ErrDamagedRecord), errors.Is(err, affcol.ErrDamaged):
		return fmt.Errorf("%s %d: %w", kind, id, ErrDamaged)
	case err != nil:
		return fmt.Errorf("%s %d: %w", kind, id, err)
	}
	return nil
}

// Raw returns the record of kind with key id as the snapshot had it (a
// copy: Record decodes without one).
func (v *View) Raw(kind snapshots.Kind, id int64) (json.RawMessage, error) {
	s := v.g.Store(kind)
	if s == nil {
		return nil, ErrNotFound
	}
	var out json.RawMessage
	ok, err := s.Get(id, func(raw []byte) error {
		out = append(json.RawMessage(nil), raw...)
		return nil
	})
	if err := recordErr(kind, id, ok, err); err != nil {
		return nil, err
	}
	return out, nil
}

// Each calls fn with every record of kind, decoded, in ascending key order,
// until fn returns an error. Meant for small kinds (factions, regions).
func (v *View) Each(kind snapshots.Kind, fn func(snapshots.Record) error) error {
	s := v.g.Store(kind)
	if s == nil {
		return nil
	}
	for i := 0; i < s.Len(); i++ {
		rec := kind.New()
		if err := s.Read(i, func(raw []byte) error { return snapshots.DecodeRecord(raw, rec) }); err != nil {
			return fmt.Errorf("%s %d: %w", kind, s.Key(i), err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// StructuresOf returns the structures a corporation owns, by ascending ID.
func (v *View) StructuresOf(corporation int64) ([]*snapshots.Structure, error) {
	s := v.g.Store(snapshots.Structures)
	if s == nil {
		return nil, nil
	}
	pos := s.Group("corporation", corporation)
	out := make([]*snapshots.Structure, 0, len(pos))
	for _, p := range pos {
		var st snapshots.Structure
		if err := s.Read(p, func(raw []byte) error { return snapshots.DecodeRecord(raw, &st) }); err != nil {
			return nil, fmt.Errorf("structure %d: %w", s.Key(p), err)
		}
		out = append(out, &st)
	}
	return out, nil
}

// Roles returns the corporation roles of a character, or ErrNotFound.
func (v *View) Roles(character int64) (*snapshots.CharacterRoles, error) {
	rec, err := v.Record(snapshots.Roles, character)
	if err != nil {
		return nil, err
	}
	return rec.(*snapshots.CharacterRoles), nil
}

// Document returns the opaque document stored for a concrete path, or
// ErrNotFound.
func (v *View) Document(path string) (json.RawMessage, error) {
	s := v.g.Store(snapshots.Documents)
	if s == nil {
		return nil, ErrNotFound
	}
	for _, p := range s.Group("path", recstore.HashPath(path)) {
		var d snapshots.Document
		if err := s.Read(p, func(raw []byte) error { return snapshots.DecodeRecord(raw, &d) }); err != nil {
			return nil, err
		}
		if d.Path == path {
			return d.Body, nil
		}
	}
	return nil, ErrNotFound
}

// Named is one resolved ID.
type Named struct {
	Category snapshots.Category `json:"category"`
	ID       int64              `json:"id"`
	Name     string             `json:"name"`
}

// resolveOrder is the order categories are tried when resolving a bare ID;
// the game's ID ranges do not overlap between them.
var resolveOrder = []snapshots.Category{
	snapshots.CategoryCharacter, snapshots.CategoryCorporation, snapshots.CategoryAlliance,
	snapshots.CategoryInventoryType, snapshots.CategorySolarSystem, snapshots.CategoryStation,
	snapshots.CategoryRegion, snapshots.CategoryConstellation, snapshots.CategoryFaction,
	snapshots.CategoryAgent,
}

// Names resolves IDs to their category and name (in lang); missing lists
// the IDs found in no category.
func (v *View) Names(ids []int64, lang string) (found []Named, missing []int64) {
	lang, _ = NormalizeLanguage(lang)
	for _, id := range ids {
		ok := false
		for _, cat := range resolveOrder {
			name, err := v.name(cat.Kind(), id, lang)
			if err != nil {
				continue
			}
			// Agents are characters to ESI.
			c := cat
			if c == snapshots.CategoryAgent {
				c = snapshots.CategoryCharacter
			}
			found = append(found, Named{Category: c, ID: id, Name: name})
			ok = true
			break
		}
		if !ok {
			missing = append(missing, id)
		}
	}
	return found, missing
}

// name returns the name in lang ("": its own name) of the record of kind
// with key id: from the record's name alone when that is all it has
// (snapshots.DecodeName), else from the record decoded.
func (v *View) name(kind snapshots.Kind, id int64, lang string) (string, error) {
	s := v.g.Store(kind)
	if s == nil {
		return "", ErrNotFound
	}
	var name string
	ok, err := s.Get(id, func(raw []byte) error {
		var fast bool
		if name, fast = snapshots.DecodeName(raw); fast {
			return nil
		}
		rec := kind.New()
		if err := snapshots.DecodeRecord(raw, rec); err != nil {
			return err
		}
		named := rec.(snapshots.Named)
		name = named.DisplayName()
		if n, ok := named.LocalizedNames()[lang]; ok {
			name = n
		}
		return nil
	})
	return name, recordErr(kind, id, ok, err)
}

// IDs resolves names to IDs by exact, case-insensitive match, per
// category; names in lang match as well as the default names.
func (v *View) IDs(names []string, lang string) map[snapshots.Category][]Named {
	lang, _ = NormalizeLanguage(lang)
	out := map[snapshots.Category][]Named{}
	for _, cat := range snapshots.Categories {
		if cat == snapshots.CategoryStructure {
			continue
		}
		ct := v.g.Tables(cat)
		if ct == nil {
			continue
		}
		for _, name := range names {
			folded := []byte(nametable.Fold(strings.TrimSpace(name)))
			seen := map[int64]bool{}
			add := func(t *nametable.Table, hidden *roaring.Bitmap) {
				t.Exact(folded, func(o uint32, id int64) bool {
					if hidden != nil && hidden.Contains(o) {
						return true // an old name, replaced in the delta
					}
					if !seen[id] {
						seen[id] = true
						out[cat] = append(out[cat], Named{Category: cat, ID: id, Name: name})
					}
					return true
				})
			}
			if ct.Delta != nil {
				add(ct.Base, ct.Delta.Mask())
				add(ct.Delta, nil)
			} else {
				add(ct.Base, nil)
			}
			if t := ct.Overlays[lang]; t != nil {
				add(t, nil)
			}
		}
	}
	for cat, list := range out {
		// Report each ID with its name as the record spells it.
		for i := range list {
			if name, err := v.name(cat.Kind(), list[i].ID, ""); err == nil {
				list[i].Name = name
			}
		}
	}
	return out
}
