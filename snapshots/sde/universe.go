package sde

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"

	"gds/snapshots"
)

// universe is the map of space: few enough records (about 10,000) to hold
// while names and stations are joined to them.
type universe struct {
	regions        []*snapshots.Region
	constellations []*snapshots.Constellation
	systems        []*snapshots.SolarSystem
}

type regionYAML struct {
	RegionID int64 `yaml:"regionID"`
}

type constellationYAML struct {
	ConstellationID int64 `yaml:"constellationID"`
}

type systemYAML struct {
	SolarSystemID int64     `yaml:"solarSystemID"`
	Security      float64   `yaml:"security"`
	SecurityClass string    `yaml:"securityClass"`
	Center        []float64 `yaml:"center"`
	Star          *struct {
		ID int64 `yaml:"id"`
	} `yaml:"star"`
}

// The top-level keys read from each file; the rest (planets, stargates:
// most of the 400 MB) is skipped without being parsed.
var (
	regionKeys        = map[string]bool{"regionID": true}
	constellationKeys = map[string]bool{"constellationID": true}
	systemKeys        = map[string]bool{"solarSystemID": true, "security": true, "securityClass": true, "center": true, "star": true}
)

// readUniverse walks universe/<area>/<region>/<constellation>/<system>; the
// layout gives each record its parent.
func (im *importer) readUniverse() error {
	u := &universe{}
	areas, err := subdirs(im.path(dirUniverse))
	if err != nil {
		return err
	}
	for _, area := range areas {
		regions, err := subdirs(area)
		if err != nil {
			return err
		}
		for _, rdir := range regions {
			if err := im.readRegion(u, rdir); err != nil {
				return err
			}
		}
	}
	sortByKey(u.regions)
	sortByKey(u.constellations)
	sortByKey(u.systems)
	im.universe = u
	return nil
}

func (im *importer) readRegion(u *universe, dir string) error {
	var ry regionYAML
	if err := im.readTopLevel(filepath.Join(dir, "region.yaml"), regionKeys, &ry); err != nil {
		return err
	}
	region := &snapshots.Region{Entity: snapshots.Entity{ID: ry.RegionID}}
	cdirs, err := subdirs(dir)
	if err != nil {
		return err
	}
	for _, cdir := range cdirs {
		c, err := im.readConstellation(u, cdir, region.ID)
		if err != nil {
			return err
		}
		region.Constellations = append(region.Constellations, c.ID)
	}
	sort.Slice(region.Constellations, func(i, j int) bool { return region.Constellations[i] < region.Constellations[j] })
	u.regions = append(u.regions, region)
	return nil
}

func (im *importer) readConstellation(u *universe, dir string, regionID int64) (*snapshots.Constellation, error) {
	var cy constellationYAML
	if err := im.readTopLevel(filepath.Join(dir, "constellation.yaml"), constellationKeys, &cy); err != nil {
		return nil, err
	}
	c := &snapshots.Constellation{Entity: snapshots.Entity{ID: cy.ConstellationID}, RegionID: regionID}
	sdirs, err := subdirs(dir)
	if err != nil {
		return nil, err
	}
	for _, sdir := range sdirs {
		var sy systemYAML
		if err := im.readTopLevel(filepath.Join(sdir, "solarsystem.yaml"), systemKeys, &sy); err != nil {
			return nil, err
		}
		s := &snapshots.SolarSystem{
			Entity:          snapshots.Entity{ID: sy.SolarSystemID},
			ConstellationID: c.ID,
			SecurityStatus:  sy.Security,
			SecurityClass:   sy.SecurityClass,
		}
		if sy.Star != nil {
			s.StarID = sy.Star.ID
		}
		if len(sy.Center) == 3 {
			s.Position = &snapshots.Position{X: sy.Center[0], Y: sy.Center[1], Z: sy.Center[2]}
		}
		u.systems = append(u.systems, s)
		im.progress("universe (systems)", len(u.systems))
		c.Systems = append(c.Systems, s.ID)
	}
	sort.Slice(c.Systems, func(i, j int) bool { return c.Systems[i] < c.Systems[j] })
	u.constellations = append(u.constellations, c)
	return c, nil
}

// subdirs lists the directories in dir, sorted.
func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// readTopLevel decodes only the top-level keys listed in keep. Skipped
// lines become blank lines, so yaml's line numbers still match the file.
func (im *importer) readTopLevel(path string, keep map[string]bool, v any) error {
	name := im.rel(path)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	var buf bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	keeping := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 && line[0] != ' ' && line[0] != '-' && line[0] != '#' {
			key, _, _ := bytes.Cut(line, []byte(":"))
			keeping = keep[string(key)]
		}
		if keeping {
			buf.Write(line)
		}
		buf.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := yaml.Unmarshal(buf.Bytes(), v); err != nil {
		return yamlError(name, 1, err)
	}
	return nil
}

// rel names a file relative to the SDE directory, as errors show it.
func (im *importer) rel(path string) string {
	if r, err := filepath.Rel(im.dir, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// writeUniverse names the regions, constellations and systems from
// invNames.yaml and writes them.
func (im *importer) writeUniverse() error {
	u := im.universe
	for _, r := range u.regions {
		if err := im.nameAndAdd(snapshots.Regions, &r.Entity, r); err != nil {
			return err
		}
	}
	for _, c := range u.constellations {
		if err := im.nameAndAdd(snapshots.Constellations, &c.Entity, c); err != nil {
			return err
		}
	}
	for _, s := range u.systems {
		s.Stations = im.stationsBySystem[s.ID]
		if err := im.nameAndAdd(snapshots.SolarSystems, &s.Entity, s); err != nil {
			return err
		}
	}
	return nil
}

// nameAndAdd names a record from invNames.yaml and writes it. A few agents
// of the export have no name there; they cannot be searched, so they are
// left out and counted in Skipped.
func (im *importer) nameAndAdd(k snapshots.Kind, e *snapshots.Entity, rec snapshots.Record) error {
	name, ok := im.names[e.ID]
	if !ok || name == "" {
		im.skipped[k]++
		return nil
	}
	e.Name = name
	return im.add(k, rec)
}
