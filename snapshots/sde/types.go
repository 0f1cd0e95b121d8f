package sde

import (
	"fmt"
	"io"
	"os"

	"gds/snapshots"
)

type typeYAML struct {
	Name          map[string]string `yaml:"name"`
	Description   map[string]string `yaml:"description"`
	Published     bool              `yaml:"published"`
	GroupID       int64             `yaml:"groupID"`
	MarketGroupID *int64            `yaml:"marketGroupID"`
	Radius        *float64          `yaml:"radius"`
	Volume        *float64          `yaml:"volume"`
	Capacity      *float64          `yaml:"capacity"`
	PortionSize   *int64            `yaml:"portionSize"`
	Mass          *float64          `yaml:"mass"`
	GraphicID     *int64            `yaml:"graphicID"`
	IconID        *int64            `yaml:"iconID"`
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
// one entry of each file is in memory.
func (im *importer) importTypes() error {
	tf, err := os.Open(im.path(fileTypes))
	if err != nil {
		return fmt.Errorf("%s: %w", fileTypes, err)
	}
	defer tf.Close()
	df, err := os.Open(im.path(fileTypeDogma))
	if err != nil {
		return fmt.Errorf("%s: %w", fileTypeDogma, err)
	}
	defer df.Close()
	types := newChunkReader(fileTypes, tf, false)
	dogma := &dogmaCursor{cr: newChunkReader(fileTypeDogma, df, false)}
	var last int64 = -1
	n := 0
	for {
		ch, err := types.Next()
		if err == io.EOF {
			return dogma.rest()
		}
		if err != nil {
			return err
		}
		if ch.ID <= last {
			return fmt.Errorf("%s line %d: type %d is out of order (after %d); the file must be sorted by id", fileTypes, ch.Line, ch.ID, last)
		}
		last = ch.ID
		rec, err := decodeType(ch)
		if err != nil {
			return err
		}
		d, err := dogma.find(ch.ID)
		if err != nil {
			return err
		}
		n++
		im.progress("types", n)
		// Type 0 ("#System", group 0) is a placeholder, not an item.
		if ch.ID <= 0 || rec.GroupID <= 0 || rec.Name == "" {
			im.skipped[snapshots.Types]++
			continue
		}
		if d != nil {
			attachDogma(rec, d)
		}
		if err := im.add(snapshots.Types, rec); err != nil {
			return fmt.Errorf("%s line %d: %w", fileTypes, ch.Line, err)
		}
	}
}

func decodeType(ch chunk) (*snapshots.Type, error) {
	var t typeYAML
	if err := decodeEntry(fileTypes, ch, &t); err != nil {
		return nil, err
	}
	names := localized(t.Name)
	descs := localized(t.Description)
	return &snapshots.Type{
		Entity:        snapshots.Entity{ID: ch.ID, Name: english(names), Names: names},
		Description:   english(descs),
		Descriptions:  descs,
		Published:     t.Published,
		GroupID:       t.GroupID,
		MarketGroupID: t.MarketGroupID,
		Radius:        t.Radius,
		Volume:        t.Volume,
		Capacity:      t.Capacity,
		PortionSize:   t.PortionSize,
		Mass:          t.Mass,
		GraphicID:     t.GraphicID,
		IconID:        t.IconID,
	}, nil
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
	cr   *chunkReader
	head *chunk // the next entry not yet matched
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
		return nil, fmt.Errorf("%s line %d: dogma for type %d, which %s does not have", fileTypeDogma, c.head.Line, c.head.ID, fileTypes)
	}
	var d dogmaYAML
	if err := decodeEntry(fileTypeDogma, *c.head, &d); err != nil {
		return nil, err
	}
	c.head = nil
	return &d, nil
}

func (c *dogmaCursor) fill() error {
	if c.head != nil || c.done {
		return nil
	}
	ch, err := c.cr.Next()
	if err == io.EOF {
		c.done = true
		return nil
	}
	if err != nil {
		return err
	}
	if ch.ID <= c.last && c.last != 0 {
		return fmt.Errorf("%s line %d: type %d is out of order (after %d); the file must be sorted by id", fileTypeDogma, ch.Line, ch.ID, c.last)
	}
	c.last = ch.ID
	c.head = &ch
	return nil
}

// rest fails when dogma entries are left after the last type.
func (c *dogmaCursor) rest() error {
	if err := c.fill(); err != nil {
		return err
	}
	if c.head != nil {
		return fmt.Errorf("%s line %d: dogma for type %d, which %s does not have", fileTypeDogma, c.head.Line, c.head.ID, fileTypes)
	}
	return nil
}
