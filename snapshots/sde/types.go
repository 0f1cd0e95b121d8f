package sde

import (
	"errors"
	"fmt"

	"gds/snapshots"
)

type typeYAML struct {
	Name                  map[string]string `yaml:"name"`
	Description           map[string]string `yaml:"description"`
	Published             bool              `yaml:"published"`
	GroupID               int64             `yaml:"groupID"`
	snapshots.TypeDetails `yaml:",inline"`
}

// groupYAML is the part of a groups.yaml entry types need.
type groupYAML struct {
	CategoryID int64 `yaml:"categoryID"`
}

// readGroups reads groups.yaml (about 1,500 small entries) so each type
// carries its group's category.
func (im *importer) readGroups() error {
	im.categories = map[int64]int64{}
	return eachEntry(im.path(fileGroups), fileGroups, func(ch chunk) error {
		var g groupYAML
		if err := decodeEntry(fileGroups, ch, &g); err != nil {
			return err
		}
		if g.CategoryID < 0 {
			return fmt.Errorf("%s line %d: group %d has category %d", fileGroups, ch.Line, ch.ID, g.CategoryID)
		}
		im.categories[ch.ID] = g.CategoryID
		return nil
	})
}

type dogmaYAML struct {
	Attributes []struct {
		AttributeID int64   `yaml:"attributeID"`
		Value       float64 `yaml:"value"`
	} `yaml:"dogmaAttributes"`
	Effects []struct {
		EffectID  int64 `yaml:"effectID"`
		IsDefault bool  `yaml:"isDefault"`
	} `yaml:"dogmaEffects"`
}

// importTypes streams types.yaml and typeDogma.yaml side by side: both are
// sorted by type id, so a merge join attaches each type's dogma while only
// a few entries of each file are in memory. Each file is decoded in its own
// goroutine (YAML decoding is most of an import's time), in step with the
// merge and the writing here.
func (im *importer) importTypes() error {
	stop := make(chan struct{})
	defer close(stop)
	types := decodeAhead[typeYAML](im.path(fileTypes), fileTypes, stop)
	dogma := &dogmaCursor{next: decodeAhead[dogmaYAML](im.path(fileTypeDogma), fileTypeDogma, stop)}
	var last int64 = -1
	n := 0
	for e := range types {
		if e.Err != nil {
			return e.Err
		}
		if e.ID <= last {
			return fmt.Errorf("%s line %d: type %d is out of order (after %d); the file must be sorted by id", fileTypes, e.Line, e.ID, last)
		}
		last = e.ID
		d, err := dogma.find(e.ID)
		if err != nil {
			return err
		}
		if n++; n%1000 == 0 {
			if err := im.ctx.Err(); err != nil {
				return err
			}
		}
		im.progress("types", n)
		rec := newType(e.ID, e.Val)
		// A group missing from groups.yaml leaves the category unknown (0).
		rec.CategoryID = im.categories[rec.GroupID]
		// Type 0 ("#System", group 0) is a placeholder, not an item.
		if e.ID <= 0 || rec.GroupID <= 0 || rec.Name == "" {
			im.skipped[snapshots.Types]++
			continue
		}
		if d != nil {
			attachDogma(rec, d)
		}
		if err := im.add(snapshots.Types, rec); err != nil {
			return fmt.Errorf("%s line %d: %w", fileTypes, e.Line, err)
		}
	}
	return dogma.rest()
}

// decoded is one entry of a map file, decoded, or the error that ended
// the file.
type decoded[T any] struct {
	ID   int64
	Line int
	Val  *T
	Err  error
}

// decodeAhead decodes the entries of a map file in a goroutine and sends
// them in file order; an error is the last thing sent. The channel closes
// at the end of the file, or when stop is closed.
func decodeAhead[T any](path, name string, stop <-chan struct{}) <-chan decoded[T] {
	out := make(chan decoded[T], 256)
	go func() {
		defer close(out)
		send := func(d decoded[T]) bool {
			select {
			case out <- d:
				return true
			case <-stop:
				return false
			}
		}
		err := eachEntry(path, name, func(ch chunk) error {
			v := new(T)
			if err := decodeEntry(name, ch, v); err != nil {
				return err
			}
			if !send(decoded[T]{ID: ch.ID, Line: ch.Line, Val: v}) {
				return errStopped
			}
			return nil
		})
		if err != nil && err != errStopped {
			send(decoded[T]{Err: err})
		}
	}()
	return out
}

var errStopped = errors.New("stopped")

func newType(id int64, t *typeYAML) *snapshots.Type {
	names := localized(t.Name)
	descs := localized(t.Description)
	return &snapshots.Type{
		Entity:       snapshots.Entity{ID: id, Name: english(names), Names: names},
		Description:  english(descs),
		Descriptions: descs,
		Published:    t.Published,
		GroupID:      t.GroupID,
		TypeDetails:  t.TypeDetails,
	}
}

func attachDogma(rec *snapshots.Type, d *dogmaYAML) {
	for _, a := range d.Attributes {
		rec.DogmaAttributes = append(rec.DogmaAttributes, snapshots.DogmaAttribute{AttributeID: a.AttributeID, Value: a.Value})
	}
	for _, e := range d.Effects {
		rec.DogmaEffects = append(rec.DogmaEffects, snapshots.DogmaEffect{EffectID: e.EffectID, IsDefault: e.IsDefault})
	}
}

// dogmaCursor walks typeDogma.yaml in step with types.yaml.
type dogmaCursor struct {
	next <-chan decoded[dogmaYAML]
	head *decoded[dogmaYAML] // the next entry not yet matched
	last int64
	done bool
}

// find returns the dogma of type id, or nil when it has none. Ids must be
// asked for in ascending order; a dogma entry whose type does not exist
// is an error, since the export would be inconsistent.
func (c *dogmaCursor) find(id int64) (*dogmaYAML, error) {
	if err := c.fill(); err != nil {
		return nil, err
	}
	if c.head == nil || c.head.ID > id {
		return nil, nil
	}
	if c.head.ID < id {
		return nil, c.orphan()
	}
	d := c.head.Val
	c.head = nil
	return d, nil
}

func (c *dogmaCursor) fill() error {
	if c.head != nil || c.done {
		return nil
	}
	e, ok := <-c.next
	if !ok {
		c.done = true
		return nil
	}
	if e.Err != nil {
		return e.Err
	}
	if e.ID <= c.last && c.last != 0 {
		return fmt.Errorf("%s line %d: type %d is out of order (after %d); the file must be sorted by id", fileTypeDogma, e.Line, e.ID, c.last)
	}
	c.last = e.ID
	c.head = &e
	return nil
}

func (c *dogmaCursor) orphan() error {
	return fmt.Errorf("%s line %d: dogma for type %d, which %s does not have", fileTypeDogma, c.head.Line, c.head.ID, fileTypes)
}

// rest fails when dogma entries are left after the last type.
func (c *dogmaCursor) rest() error {
	if err := c.fill(); err != nil {
		return err
	}
	if c.head != nil {
		return c.orphan()
	}
	return nil
}
