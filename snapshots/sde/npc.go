package sde

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"gds/snapshots"
)

type agentYAML struct {
	AgentTypeID   int64 `yaml:"agentTypeID"`
	CorporationID int64 `yaml:"corporationID"`
	DivisionID    int64 `yaml:"divisionID"`
	IsLocator     bool  `yaml:"isLocator"`
	Level         int   `yaml:"level"`
	LocationID    int64 `yaml:"locationID"`
}

// readAgents collects the agents (agents.yaml is not quite sorted by id);
// their names come later from invNames.yaml.
func (im *importer) readAgents() error {
	return eachEntry(im.path(fileAgents), fileAgents, func(ch chunk) error {
		var a agentYAML
		if err := decodeEntry(fileAgents, ch, &a); err != nil {
			return err
		}
		im.agents = append(im.agents, &snapshots.Agent{
			Entity:        snapshots.Entity{ID: ch.ID},
			CorporationID: a.CorporationID,
			LocationID:    a.LocationID,
			AgentTypeID:   a.AgentTypeID,
			DivisionID:    a.DivisionID,
			Level:         a.Level,
			IsLocator:     a.IsLocator,
		})
		im.progress("agents", len(im.agents))
		return nil
	})
}

func (im *importer) writeAgents() error {
	sortByKey(im.agents)
	for _, a := range im.agents {
		if err := im.nameAndAdd(snapshots.Agents, &a.Entity, a); err != nil {
			return err
		}
	}
	return nil
}

type nameYAML struct {
	ItemID   int64  `yaml:"itemID"`
	ItemName string `yaml:"itemName"`
}

// readNames keeps the names of the ids the universe and agents need. Of
// invNames.yaml's half a million items only those few thousand are
// decoded: the id is read from the item's first line without yaml.
func (im *importer) readNames() error {
	want := map[int64]bool{}
	for _, r := range im.universe.regions {
		want[r.ID] = true
	}
	for _, c := range im.universe.constellations {
		want[c.ID] = true
	}
	for _, s := range im.universe.systems {
		want[s.ID] = true
	}
	for _, a := range im.agents {
		want[a.ID] = true
	}
	im.names = make(map[int64]string, len(want))
	n := 0
	return eachItem(im.path(fileNames), fileNames, func(ch chunk) error {
		n++
		im.progress("names", n)
		if id, ok := quickItemID(ch.Text); ok && !want[id] {
			return nil
		}
		var it nameYAML
		if err := decodeItem(fileNames, ch, &it); err != nil {
			return err
		}
		if want[it.ItemID] {
			im.names[it.ItemID] = it.ItemName
		}
		return nil
	})
}

// quickItemID reads the id of an invNames item written as "- itemID: N".
func quickItemID(text []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(firstLine(text), []byte("- itemID: "))
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
	return id, err == nil
}

type stationYAML struct {
	StationID                int64   `yaml:"stationID"`
	StationName              string  `yaml:"stationName"`
	StationTypeID            int64   `yaml:"stationTypeID"`
	SolarSystemID            int64   `yaml:"solarSystemID"`
	CorporationID            int64   `yaml:"corporationID"`
	OperationID              int64   `yaml:"operationID"`
	ReprocessingEfficiency   float64 `yaml:"reprocessingEfficiency"`
	ReprocessingStationsTake float64 `yaml:"reprocessingStationsTake"`
	MaxShipVolumeDockable    float64 `yaml:"maxShipVolumeDockable"`
	OfficeRentalCost         float64 `yaml:"officeRentalCost"`
	X                        float64 `yaml:"x"`
	Y                        float64 `yaml:"y"`
	Z                        float64 `yaml:"z"`
}

// readStations collects the NPC stations; systems list them and factions
// count them, so they are read before either is written.
func (im *importer) readStations() error {
	services, err := im.readServices()
	if err != nil {
		return err
	}
	err = eachItem(im.path(fileStations), fileStations, func(ch chunk) error {
		var s stationYAML
		if err := decodeItem(fileStations, ch, &s); err != nil {
			return err
		}
		im.stations = append(im.stations, &snapshots.Station{
			Entity: snapshots.Entity{ID: s.StationID, Name: s.StationName},
			StationDetails: snapshots.StationDetails{
				SystemID:                 s.SolarSystemID,
				TypeID:                   s.StationTypeID,
				Owner:                    s.CorporationID,
				Position:                 &snapshots.Position{X: s.X, Y: s.Y, Z: s.Z},
				ReprocessingEfficiency:   s.ReprocessingEfficiency,
				ReprocessingStationsTake: s.ReprocessingStationsTake,
				MaxDockableShipVolume:    s.MaxShipVolumeDockable,
				OfficeRentalCost:         s.OfficeRentalCost,
			},
			Services: services[s.OperationID],
		})
		im.progress("stations", len(im.stations))
		return nil
	})
	if err != nil {
		return err
	}
	sortByKey(im.stations)
	im.stationsBySystem = map[int64][]int64{}
	for _, s := range im.stations {
		im.stationsBySystem[s.SystemID] = append(im.stationsBySystem[s.SystemID], s.ID)
	}
	return nil
}

func (im *importer) writeStations() error {
	for _, s := range im.stations {
		if err := im.add(snapshots.Stations, s); err != nil {
			return err
		}
	}
	return nil
}

type operationYAML struct {
	Services []int64 `yaml:"services"`
}

type serviceYAML struct {
	Name map[string]string `yaml:"serviceNameID"`
}

// esiServices spells the service names where ESI's station services enum
// does not follow from the English name (ESI keeps its old typos).
var esiServices = map[string]string{
	"Assassination Missions": "assasination-missions",
	"Laboratory":             "labratory",
	"Security Office":        "security-offices",
}

// readServices maps a station operation to ESI's service names, from
// stationOperations.yaml and stationServices.yaml. Both are optional: without
// them stations simply have no services.
func (im *importer) readServices() (map[int64][]string, error) {
	names := map[int64]string{}
	err := eachEntry(im.path(fileServices), fileServices, func(ch chunk) error {
		var s serviceYAML
		if err := decodeEntry(fileServices, ch, &s); err != nil {
			return err
		}
		en := s.Name["en"]
		if slug, ok := esiServices[en]; ok {
			names[ch.ID] = slug
		} else if en != "" {
			names[ch.ID] = strings.ReplaceAll(strings.ToLower(en), " ", "-")
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ops := map[int64][]string{}
	err = eachEntry(im.path(fileOperations), fileOperations, func(ch chunk) error {
		var op operationYAML
		if err := decodeEntry(fileOperations, ch, &op); err != nil {
			return err
		}
		var list []string
		for _, id := range op.Services {
			if n, ok := names[id]; ok {
				list = append(list, n)
			}
		}
		sort.Strings(list)
		ops[ch.ID] = list
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return ops, err
}

type corporationYAML struct {
	Deleted     bool              `yaml:"deleted"`
	Name        map[string]string `yaml:"nameID"`
	Description map[string]string `yaml:"descriptionID"`
	Ticker      string            `yaml:"tickerName"`
	CEOID       int64             `yaml:"ceoID"`
	Shares      *int64            `yaml:"shares"`
	FactionID   int64             `yaml:"factionID"`
	StationID   int64             `yaml:"stationID"`
	TaxRate     float64           `yaml:"taxRate"`
	URL         string            `yaml:"url"`
}

// npcCreator is the creator ESI names for every NPC corporation (and the
// CEO of the few the export gives none): character 1, "EVE System".
const npcCreator = 1

// readCorporations collects the NPC corporations (a few hundred); deleted
// ones are left out, as ESI no longer knows them.
func (im *importer) readCorporations() error {
	return eachEntry(im.path(fileCorporations), fileCorporations, func(ch chunk) error {
		var c corporationYAML
		if err := decodeEntry(fileCorporations, ch, &c); err != nil {
			return err
		}
		if c.Deleted {
			im.skipped[snapshots.Corporations]++
			return nil
		}
		names := localized(c.Name)
		descs := localized(c.Description)
		if c.CEOID == 0 {
			c.CEOID = npcCreator
		}
		im.corps = append(im.corps, &snapshots.Corporation{
			Entity:        snapshots.Entity{ID: ch.ID, Name: english(names), Names: names},
			Ticker:        c.Ticker,
			CEOID:         c.CEOID,
			CreatorID:     npcCreator,
			Shares:        c.Shares,
			FactionID:     c.FactionID,
			HomeStationID: c.StationID,
			TaxRate:       c.TaxRate,
			Description:   english(descs),
			Descriptions:  descs,
			URL:           c.URL,
			NPC:           true,
		})
		return nil
	})
}

func (im *importer) writeCorporations() error {
	sortByKey(im.corps)
	for _, c := range im.corps {
		if err := im.add(snapshots.Corporations, c); err != nil {
			return fmt.Errorf("%s: %w", fileCorporations, err)
		}
	}
	return nil
}

type factionYAML struct {
	Name                 map[string]string `yaml:"nameID"`
	Description          map[string]string `yaml:"descriptionID"`
	CorporationID        int64             `yaml:"corporationID"`
	MilitiaCorporationID int64             `yaml:"militiaCorporationID"`
	SolarSystemID        int64             `yaml:"solarSystemID"`
	SizeFactor           float64           `yaml:"sizeFactor"`
	UniqueName           bool              `yaml:"uniqueName"`
}

// importFactions streams factions.yaml. Station counts are those of ESI's
// /universe/factions/: the stations owned by the faction's corporations,
// and the systems they are in.
func (im *importer) importFactions() error {
	corpFaction := map[int64]int64{}
	for _, c := range im.corps {
		corpFaction[c.ID] = c.FactionID
	}
	stations := map[int64]int64{}
	systems := map[int64]map[int64]bool{}
	for _, s := range im.stations {
		f := corpFaction[s.Owner]
		if f == 0 {
			continue
		}
		stations[f]++
		if systems[f] == nil {
			systems[f] = map[int64]bool{}
		}
		systems[f][s.SystemID] = true
	}
	var last int64
	return eachEntry(im.path(fileFactions), fileFactions, func(ch chunk) error {
		if ch.ID <= last {
			return fmt.Errorf("%s line %d: faction %d is out of order (after %d)", fileFactions, ch.Line, ch.ID, last)
		}
		last = ch.ID
		var f factionYAML
		if err := decodeEntry(fileFactions, ch, &f); err != nil {
			return err
		}
		names := localized(f.Name)
		descs := localized(f.Description)
		rec := &snapshots.Faction{
			Entity:       snapshots.Entity{ID: ch.ID, Name: english(names), Names: names},
			Description:  english(descs),
			Descriptions: descs,
			FactionDetails: snapshots.FactionDetails{
				CorporationID:        f.CorporationID,
				MilitiaCorporationID: f.MilitiaCorporationID,
				SolarSystemID:        f.SolarSystemID,
				SizeFactor:           f.SizeFactor,
				StationCount:         stations[ch.ID],
				StationSystemCount:   int64(len(systems[ch.ID])),
				IsUnique:             f.UniqueName,
			},
		}
		if err := im.add(snapshots.Factions, rec); err != nil {
			return fmt.Errorf("%s line %d: %w", fileFactions, ch.Line, err)
		}
		return nil
	})
}
