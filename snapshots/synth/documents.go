package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gds/snapshots"
)

// docCorporations is how many corporations (spread over the ID range) get
// documents, for themselves and their CEO; the first alliance gets its
// contacts. A handful is enough to exercise the document routes
// (docs/api.md, Character and corporation documents).
const docCorporations = 5

// Ore type IDs (Veldspar, Scordite, Pyroxeres, Plagioclase, Kernite) and
// control tower type IDs (Amarr, Gallente, Caldari, Minmatar) of the SDE.
var (
	oreTypes   = []int64{1230, 1228, 1224, 18, 20}
	towerTypes = []int64{12235, 12236, 16213, 16214}
)

// A document is a path and a body builder.
type docSpec struct {
	path string
	body func() any
}

func (g *generator) documents(emit emitFunc) error {
	w := g.w
	rng := rand.New(rand.NewPCG(w.seed, saltDocStream))
	d := docBuilder{w: w, rng: rng}
	var specs []docSpec
	for i := range min(w.nCorps, docCorporations) {
		c := i * w.nCorps / min(w.nCorps, docCorporations)
		specs = append(specs, d.character(w.member(c, 0), c)...)
		specs = append(specs, d.corporation(c)...)
		if i == 0 {
			specs = append(specs, d.moreCorporation(c)...)
		}
	}
	if w.nAlliances > 0 {
		specs = append(specs, d.allianceContacts(0))
	}
	for _, spec := range specs {
		body, err := json.Marshal(spec.body())
		if err != nil {
			return fmt.Errorf("document %s: %w", spec.path, err)
		}
		g.docSeq++
		if err := emit(snapshots.Documents, &snapshots.Document{Seq: g.docSeq, Path: spec.path, Body: body}); err != nil {
			return err
		}
	}
	return nil
}

// docBuilder makes ESI-shaped bodies from the generated world.
type docBuilder struct {
	w   *world
	rng *rand.Rand
}

func (d docBuilder) past(span time.Duration) time.Time {
	return at(d.rng, d.w.created.Add(-span), span)
}

func (d docBuilder) system() int64 { return d.w.systems[d.rng.IntN(len(d.w.systems))].id }

func (d docBuilder) isk(scale float64) float64 {
	return math.Round(d.rng.Float64()*scale*100) / 100
}

func (d docBuilder) character(j, c int64) []docSpec {
	id := d.w.charIDs.id(j)
	base := fmt.Sprintf("/characters/%d/", id)
	type folder struct {
		FolderID int64  `json:"folder_id"`
		Name     string `json:"name"`
	}
	type coordinates struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
		Z float64 `json:"z"`
	}
	type bookmark struct {
		BookmarkID  int64        `json:"bookmark_id"`
		Created     time.Time    `json:"created"`
		CreatorID   int64        `json:"creator_id"`
		FolderID    int64        `json:"folder_id,omitempty"`
		Label       string       `json:"label"`
		LocationID  int64        `json:"location_id"`
		Notes       string       `json:"notes"`
		Coordinates *coordinates `json:"coordinates,omitempty"`
	}
	folderID := 1 + d.rng.Int64N(1_000_000)
	return []docSpec{
		{base + "bookmarks/", func() any {
			var out []bookmark
			for k := range 1 + d.rng.IntN(4) {
				out = append(out, bookmark{
					BookmarkID: 10_000_000 + d.rng.Int64N(90_000_000), Created: d.past(365 * 24 * time.Hour), CreatorID: id,
					FolderID: folderID, Label: fmt.Sprintf("Safe %d", k+1), LocationID: d.system(), Notes: "",
					Coordinates: &coordinates{X: d.rng.NormFloat64() * 1e12, Y: d.rng.NormFloat64() * 1e11, Z: d.rng.NormFloat64() * 1e12},
				})
			}
			return out
		}},
		{base + "bookmarks/folders/", func() any { return []folder{{FolderID: folderID, Name: "Safes"}} }},
		{base + "titles/", func() any {
			return []struct {
				TitleID int64  `json:"title_id"`
				Name    string `json:"name"`
			}{{1, "Member"}, {2, "<b>Fleet Commander</b>"}}
		}},
		{base + "mining/", func() any {
			type entry struct {
				Date          string `json:"date"`
				SolarSystemID int64  `json:"solar_system_id"`
				TypeID        int64  `json:"type_id"`
				Quantity      int64  `json:"quantity"`
			}
			var out []entry
			for k := range 3 {
				out = append(out, entry{Date: d.w.created.AddDate(0, 0, -k-1).Format("2006-01-02"), SolarSystemID: d.system(),
					TypeID: oreTypes[d.rng.IntN(len(oreTypes))], Quantity: 1000 + d.rng.Int64N(50_000)})
			}
			return out
		}},
		{base + "wallet/journal/", func() any { return d.journal(id, d.w.corpIDs.id(c)) }},
		{base + "fw/stats/", func() any { return d.fwStats() }},
	}
}

func (d docBuilder) corporation(c int64) []docSpec {
	id := d.w.corpIDs.id(c)
	base := fmt.Sprintf("/corporations/%d/", id)
	ceo := d.w.charIDs.id(d.w.member(c, 0))
	return []docSpec{
		{base + "starbases/", func() any {
			type starbase struct {
				StarbaseID   int64     `json:"starbase_id"`
				TypeID       int64     `json:"type_id"`
				SystemID     int64     `json:"system_id"`
				MoonID       int64     `json:"moon_id"`
				State        string    `json:"state"`
				OnlinedSince time.Time `json:"onlined_since"`
			}
			return []starbase{{
				StarbaseID: 1_000_000_000 + d.rng.Int64N(100_000_000), TypeID: towerTypes[d.rng.IntN(len(towerTypes))],
				SystemID: d.system(), MoonID: 40_000_000 + d.rng.Int64N(400_000), State: "online",
				OnlinedSince: d.past(3 * 365 * 24 * time.Hour),
			}}
		}},
		{base + "wallets/1/journal/", func() any { return d.journal(id, ceo) }},
		{base + "members/titles/", func() any {
			type memberTitles struct {
				CharacterID int64   `json:"character_id"`
				Titles      []int64 `json:"titles"`
			}
			out := []memberTitles{{CharacterID: ceo, Titles: []int64{1, 2}}}
			if d.w.corpSize(c) > 1 {
				out = append(out, memberTitles{CharacterID: d.w.charIDs.id(d.w.member(c, 1)), Titles: []int64{1}})
			}
			return out
		}},
		{base + "standings/", func() any {
			type standing struct {
				FromID   int64   `json:"from_id"`
				FromType string  `json:"from_type"`
				Standing float64 `json:"standing"`
			}
			return []standing{
				{FromID: 500001, FromType: "faction", Standing: math.Round((d.rng.Float64()*20-10)*100) / 100},
				{FromID: 1000035, FromType: "npc_corp", Standing: math.Round((d.rng.Float64()*20-10)*100) / 100},
			}
		}},
		{base + "facilities/", func() any {
			type facility struct {
				FacilityID int64 `json:"facility_id"`
				SystemID   int64 `json:"system_id"`
				TypeID     int64 `json:"type_id"`
			}
			return []facility{{FacilityID: structureLo + d.rng.Int64N(1_000_000_000), SystemID: d.system(), TypeID: 35825}} // a Raitaru
		}},
		{base + "medals/", func() any {
			type medal struct {
				MedalID     int64     `json:"medal_id"`
				Title       string    `json:"title"`
				Description string    `json:"description"`
				CreatorID   int64     `json:"creator_id"`
				Created     time.Time `json:"created_at"` // ESI's name; bookmarks say "created"
			}
			return []medal{{MedalID: 1 + d.rng.Int64N(100_000), Title: "Iron Miner", Description: "For a million units of Veldspar.", CreatorID: ceo, Created: d.past(365 * 24 * time.Hour)}}
		}},
	}
}

func (d docBuilder) allianceContacts(a int64) docSpec {
	path := fmt.Sprintf("/alliances/%d/contacts/", d.w.allianceIDs.id(a))
	return docSpec{path, func() any {
		type contact struct {
			ContactID   int64   `json:"contact_id"`
			ContactType string  `json:"contact_type"`
			Standing    float64 `json:"standing"`
		}
		out := []contact{{ContactID: 500001, ContactType: "faction", Standing: -10}}
		for k := range min(d.w.nAlliances-1, 3) {
			out = append(out, contact{ContactID: d.w.allianceIDs.id(k + 1), ContactType: "alliance", Standing: []float64{-10, -5, 5, 10}[d.rng.IntN(4)]})
		}
		return out
	}}
}

// journal is a wallet journal of both the character and corporation
// routes; owner pays and is paid by other.
func (d docBuilder) journal(owner, other int64) any {
	type entry struct {
		ID            int64     `json:"id"`
		Date          time.Time `json:"date"`
		RefType       string    `json:"ref_type"`
		Description   string    `json:"description"`
		Amount        float64   `json:"amount"`
		Balance       float64   `json:"balance"`
		FirstPartyID  int64     `json:"first_party_id"`
		SecondPartyID int64     `json:"second_party_id"`
	}
	refTypes := []string{"player_donation", "bounty_prizes", "market_transaction", "brokers_fee", "transaction_tax", "corporate_reward_payout"}
	balance := d.isk(1e10)
	var out []entry
	for k := range 5 {
		amount := d.isk(5e7)
		if d.rng.IntN(2) == 0 {
			amount = -amount
		}
		balance = math.Round((balance+amount)*100) / 100
		ref := refTypes[d.rng.IntN(len(refTypes))]
		out = append(out, entry{
			ID: 20_000_000_000 + d.rng.Int64N(1_000_000_000), Date: d.w.created.Add(-time.Duration(5-k) * time.Hour),
			RefType: ref, Description: ref, Amount: amount, Balance: balance, FirstPartyID: owner, SecondPartyID: other,
		})
	}
	return out
}

func (d docBuilder) fwStats() any {
	type tally struct {
		Yesterday int64 `json:"yesterday"`
		LastWeek  int64 `json:"last_week"`
		Total     int64 `json:"total"`
	}
	y := d.rng.Int64N(20)
	return struct {
		FactionID     int64 `json:"faction_id"`
		Kills         tally `json:"kills"`
		VictoryPoints tally `json:"victory_points"`
	}{
		FactionID:     500001 + d.rng.Int64N(4),
		Kills:         tally{y, y * 5, y * 100},
		VictoryPoints: tally{y * 10, y * 60, y * 1500},
	}
}
