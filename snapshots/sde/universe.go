package sde

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

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
	ConstellationID int64     `yaml:"constellationID"`
	Center          []float64 `yaml:"center"`
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
// most of the 400 MB) is skipped without being parsed: celestials takes
// only their IDs from the lines.
var (
	regionKeys        = map[string]bool{"regionID": true}
	constellationKeys = map[string]bool{"constellationID": true, "center": true}
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
	if err := im.readTopLevel(filepath.Join(dir, "region.yaml"), regionKeys, &ry, nil); err != nil {
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
	if err := im.readTopLevel(filepath.Join(dir, "constellation.yaml"), constellationKeys, &cy, nil); err != nil {
		return nil, err
	}
	c := &snapshots.Constellation{Entity: snapshots.Entity{ID: cy.ConstellationID}, RegionID: regionID,
		Position: position(cy.Center)}
	sdirs, err := subdirs(dir)
	if err != nil {
		return nil, err
	}
	for _, sdir := range sdirs {
		var sy systemYAML
		var cel celestials
		if err := im.readTopLevel(filepath.Join(sdir, "solarsystem.yaml"), systemKeys, &sy, cel.line); err != nil {
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
		s.Position = position(sy.Center)
		s.Planets, s.Stargates = cel.planets, cel.stargates
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
// Every line also goes to each, when not nil.
func (im *importer) readTopLevel(path string, keep map[string]bool, v any, each func(line []byte)) error {
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
		if each != nil {
			each(line)
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

// position is a centre [x, y, z] as ESI's position; nil when absent.
func position(c []float64) *snapshots.Position {
	if len(c) != 3 {
		return nil
	}
	return &snapshots.Position{X: c[0], Y: c[1], Z: c[2]}
}

// celestials collects the IDs of a solarsystem.yaml's planets (with their
// moons and asteroid belts) and stargates from its lines, without parsing
// the blocks around them (positions, statistics: most of the file). The
// export writes them as mapping keys at fixed indents:
//
//	planets:
//	  40009077:          a planet
//	    asteroidBelts:
//	      40009079:      one of its belts
//	    moons:
//	      40009081:      one of its moons
//	stargates:
//	  50001248:          a stargate
type celestials struct {
	planets   []snapshots.Planet
	stargates []int64
	section   string // the top-level key being read
	sub       string // the planet's key being read
}

func (c *celestials) line(line []byte) {
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	key, rest, ok := bytes.Cut(line[indent:], []byte(":"))
	if !ok || len(bytes.TrimSpace(rest)) > 0 || len(key) == 0 {
		if indent == 0 && len(line) > 0 && line[0] != '-' {
			c.section = "" // a top-level key with a value on its line
		}
		return
	}
	switch indent {
	case 0:
		c.section = string(key)
	case 2:
		if id, ok := mapKeyID(key); ok {
			switch c.section {
			case "planets":
				c.planets = append(c.planets, snapshots.Planet{PlanetID: id})
				c.sub = ""
			case "stargates":
				c.stargates = append(c.stargates, id)
			}
		}
	case 4:
		c.sub = string(key)
	case 6:
		if c.section != "planets" || len(c.planets) == 0 {
			return
		}
		if id, ok := mapKeyID(key); ok {
			p := &c.planets[len(c.planets)-1]
			switch c.sub {
			case "moons":
				p.Moons = append(p.Moons, id)
			case "asteroidBelts":
				p.AsteroidBelts = append(p.AsteroidBelts, id)
			}
		}
	}
}

// mapKeyID reads a mapping key that is a positive ID.
func mapKeyID(key []byte) (int64, bool) {
	id, err := strconv.ParseInt(string(key), 10, 64)
	return id, err == nil && id > 0
}
