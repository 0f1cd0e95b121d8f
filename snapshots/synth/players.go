package synth

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gds/snapshots"
)

func (w *world) alliances(emit emitFunc) error {
	names := newNameGen(rand.New(rand.NewPCG(w.seed, saltAllianceStream)))
	for a := range w.nAlliances {
		exec := int64(w.allianceCorps[a][0])
		name := names.alliance()
		founded := w.allianceFounded(a)
		rec := &snapshots.Alliance{
			Entity:                snapshots.Entity{ID: w.allianceIDs.id(a), Name: name},
			Ticker:                names.ticker(name, 5),
			CreatorID:             w.charIDs.id(w.member(exec, 0)),
			CreatorCorporationID:  w.corpIDs.id(exec),
			ExecutorCorporationID: w.corpIDs.id(exec),
			DateFounded:           &founded,
		}
		if err := emit(snapshots.Alliances, rec); err != nil {
			return err
		}
	}
	return nil
}

// taxRates are the rates corporations commonly set; 10% is the default.
var taxRates = []float64{0, 0.05, 0.1, 0.1, 0.1, 0.1, 0.15, 0.2, 0.5, 1}

func (g *generator) corporations(emit emitFunc) error {
	w := g.w
	rng := rand.New(rand.NewPCG(w.seed, saltCorpStream))
	names := newNameGen(rng)
	w.corpTickers = make([]string, w.nCorps)
	for c := range w.nCorps {
		name := names.corporation()
		ticker := names.ticker(name, 5)
		w.corpTickers[c] = ticker
		founded := w.corpFounded(c)
		ceo := w.charIDs.id(w.member(c, 0))
		warEligible := rng.IntN(10) != 0
		rec := &snapshots.Corporation{
			Entity:      snapshots.Entity{ID: w.corpIDs.id(c), Name: name},
			Ticker:      ticker,
			MemberCount: w.corpSize(c),
			CEOID:       ceo,
			CreatorID:   ceo,
			AllianceID:  w.allianceID(c),
			TaxRate:     taxRates[rng.IntN(len(taxRates))],
			DateFounded: &founded,
			WarEligible: &warEligible,
		}
		if n := w.corpSize(c); n > 1 && rng.IntN(5) == 0 {
			// The founder has handed the corporation on.
			rec.CreatorID = w.charIDs.id(w.member(c, 1+rng.Int64N(n-1)))
		}
		if len(g.stations) > 0 && rng.IntN(2) == 0 {
			rec.HomeStationID = g.stations[rng.IntN(len(g.stations))]
		}
		if rng.IntN(4) == 0 {
			rec.Description = descriptions[rng.IntN(len(descriptions))]
		}
		if rng.IntN(8) == 0 {
			rec.URL = "https://" + slug(ticker) + ".example.org/"
		}
		if err := emit(snapshots.Corporations, rec); err != nil {
			return err
		}
	}
	return nil
}

// characters writes characters and, alongside, the roles of those who
// hold any (both files are keyed by character ID).
func (w *world) characters(emit emitFunc) error {
	rng := rand.New(rand.NewPCG(w.seed, saltCharStream))
	names := newNameGen(rng)
	for j := range w.nChars {
		c := w.corpOf(j)
		rec := w.character(j, c, rng, names)
		if err := emit(snapshots.Characters, rec); err != nil {
			return err
		}
		if r := w.roles(j, c); r != nil {
			if err := emit(snapshots.Roles, &snapshots.CharacterRoles{CharacterID: rec.ID, CorporationID: rec.CorporationID, Roles: r}); err != nil {
				return err
			}
		}
	}
	return nil
}

// cultureWeights are the empires' shares of pilots, in percent.
var cultureWeights = [numCultures]int{caldari: 32, minmatar: 24, amarr: 20, gallente: 24}

func pickCulture(rng *rand.Rand) culture {
	r := rng.IntN(100)
	for c, wt := range cultureWeights {
		if r < wt {
			return culture(c)
		}
		r -= wt
	}
	return gallente
}

func (w *world) character(j, c int64, rng *rand.Rand, names *nameGen) *snapshots.Character {
	cult := pickCulture(rng)
	gender := "male"
	if rng.IntN(100) < 35 {
		gender = "female"
	}
	born := w.birthday(j)
	// Most pilots sit a little above zero; a tail of pirates far below.
	sec := rng.NormFloat64()*1.2 + 0.6
	if rng.IntN(20) == 0 {
		sec = -10 * rng.Float64()
	}
	sec = math.Round(math.Max(-10, math.Min(5, sec))*1e6) / 1e6
	bloodlines := bloodlineIDs[cult]
	rec := &snapshots.Character{
		Entity:         snapshots.Entity{ID: w.charIDs.id(j), Name: names.character(cult)},
		CorporationID:  w.corpIDs.id(c),
		AllianceID:     w.allianceID(c),
		Birthday:       &born,
		Gender:         gender,
		RaceID:         raceIDs[cult],
		BloodlineID:    bloodlines[rng.IntN(len(bloodlines))],
		SecurityStatus: &sec,
	}
	if rng.IntN(50) == 0 {
		rec.Description = descriptions[rng.IntN(len(descriptions))]
	}
	return rec
}

// roles decides a character's corporation roles from its index alone: the
// CEO is Director and Station_Manager; about 5% of the others are
// Station_Manager (some with a second role); about 7% hold other roles
// only, so a token without Station_Manager is easy to find.
func (w *world) roles(j, c int64) []string {
	if w.isCEO(j, c) {
		return []string{"Director", snapshots.RoleStationManager}
	}
	h := mix(w.seed, saltRole, uint64(j))
	other := func(k uint64) string {
		return otherRoles[below(mix(w.seed, saltRole+k, uint64(j)), uint64(len(otherRoles)))]
	}
	var roles []string
	switch r := below(h, 1000); {
	case r < 30:
		roles = []string{snapshots.RoleStationManager}
	case r < 50:
		roles = []string{snapshots.RoleStationManager, other(100)}
	case r < 100:
		roles = []string{other(100)}
	case r < 120:
		roles = []string{other(100), other(200)}
	default:
		return nil
	}
	slices.Sort(roles)
	return slices.Compact(roles)
}

// slug lowercases a ticker to letters and digits for a URL.
func slug(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; isAlnum(c) {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "corp"
	}
	return string(b)
}

// at returns t plus a random duration in [0, span), whole seconds.
func at(rng *rand.Rand, t time.Time, span time.Duration) time.Time {
	if span < time.Second {
		return t
	}
	return t.Add(time.Duration(rng.Int64N(int64(span/time.Second))) * time.Second)
}
