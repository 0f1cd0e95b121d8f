package synth

import (
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"gds/snapshots"
)

// Access lists are bounded: a structure lists the first accessMembers
// members of its owner (CEO first, in membership order) and, when the owner
// is in an alliance, the CEOs of up to accessAllies other corporations of
// that alliance (executor first). Real ACLs are groups; this is their
// expansion, capped so a structure of a 5,000-pilot corporation stays small.
const (
	accessMembers = 40
	accessAllies  = 10
)

// stateWeights are how often each state occurs, in thousandths; most
// structures sit quietly in shield_vulnerable.
var stateWeights = []struct {
	state  string
	weight int
}{
	{"shield_vulnerable", 820},
	{"armor_reinforce", 40},
	{"hull_reinforce", 30},
	{"armor_vulnerable", 25},
	{"hull_vulnerable", 20},
	{"anchoring", 15},
	{"onlining_vulnerable", 15},
	{"anchor_vulnerable", 10},
	{"deploy_vulnerable", 5},
	{"fitting_invulnerable", 5},
	{"unanchored", 10},
	{"online_deprecated", 3},
	{"unknown", 2},
}

func (w *world) structures(emit emitFunc) error {
	rng := rand.New(rand.NewPCG(w.seed, saltStructureStream))
	names := newNameGen(rng)
	ids := newIDSpace(w.seed, saltStructureID, structureLo, structureLo+max(w.nStructures, 1)*structureStep, w.nStructures)
	for j := range w.nStructures {
		if err := emit(snapshots.Structures, w.structure(ids.id(j), rng, names)); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) structure(id int64, rng *rand.Rand, names *nameGen) *snapshots.Structure {
	c := w.pickOwner(rng)
	typ := pickStructureType(rng)
	sys := w.systems[rng.IntN(len(w.systems))]
	st := &snapshots.Structure{
		ID:               id,
		Name:             sys.name + " - " + names.structure(w.corpTickers[c]),
		TypeID:           typ.id,
		CorporationID:    w.corpIDs.id(c),
		SystemID:         sys.id,
		ProfileID:        100000 + 4*c + rng.Int64N(4),
		State:            pickState(rng),
		ReinforceWeekday: rng.IntN(7),
		ReinforceHour:    rng.IntN(24),
		Access:           w.access(c),
	}
	st.Services = services(rng, typ)
	if online(st.Services) {
		fuel := at(rng, w.created.Add(time.Hour), 90*24*time.Hour)
		st.FuelExpires = &fuel
	}
	w.timers(st, rng)
	st.CurrentVul = vulWindows(st.ReinforceHour)
	st.NextVul = st.CurrentVul
	if rng.IntN(10) == 0 {
		// A requested change applies seven days after it was made.
		day, hour := rng.IntN(7), rng.IntN(24)
		apply := at(rng, w.created.Add(time.Minute), 7*24*time.Hour-time.Minute)
		st.NextReinforceWeekday, st.NextReinforceHour, st.NextReinforceApply = &day, &hour, &apply
		st.NextVul = vulWindows(hour)
	}
	return st
}

// pickOwner favours big corporations half of the time (a uniformly drawn
// member's corporation) and picks any corporation otherwise.
func (w *world) pickOwner(rng *rand.Rand) int64 {
	if rng.IntN(2) == 0 {
		pos := rng.Int64N(w.nChars)
		return int64(sort.Search(int(w.nCorps), func(c int) bool { return w.corpStart[c+1] > pos }))
	}
	return rng.Int64N(w.nCorps)
}

func pickStructureType(rng *rand.Rand) structureType {
	total := 0
	for _, t := range structureTypes {
		total += t.weight
	}
	r := rng.IntN(total)
	for _, t := range structureTypes {
		if r < t.weight {
			return t
		}
		r -= t.weight
	}
	return structureTypes[0]
}

func pickState(rng *rand.Rand) string {
	r := rng.IntN(1000)
	for _, s := range stateWeights {
		if r < s.weight {
			return s.state
		}
		r -= s.weight
	}
	return "shield_vulnerable"
}

// services fits a random subset of the type's services. About 8% of
// structures have none fitted and about 10% have every service offline:
// both are in low power.
func services(rng *rand.Rand, typ structureType) []snapshots.Service {
	r := rng.IntN(100)
	if r < 8 {
		return nil
	}
	allOffline := r < 18
	var out []snapshots.Service
	for _, name := range typ.services {
		if rng.IntN(10) >= 6 {
			continue
		}
		state := "online"
		if allOffline || rng.IntN(12) == 0 {
			state = "offline"
		}
		out = append(out, snapshots.Service{Name: name, State: state})
	}
	if len(out) == 0 {
		state := "online"
		if allOffline {
			state = "offline"
		}
		out = append(out, snapshots.Service{Name: typ.services[0], State: state})
	}
	return out
}

func online(ss []snapshots.Service) bool {
	for _, s := range ss {
		if s.State == "online" {
			return true
		}
	}
	return false
}

// timers sets the state timer of the states that have one and the
// unanchoring time of a few structures.
func (w *world) timers(st *snapshots.Structure, rng *rand.Rand) {
	switch st.State {
	case "armor_reinforce", "hull_reinforce", "anchoring", "onlining_vulnerable", "deploy_vulnerable":
		start := at(rng, w.created.Add(-2*24*time.Hour), 2*24*time.Hour)
		end := at(rng, w.created.Add(time.Hour), 6*24*time.Hour)
		st.StateTimerStart, st.StateTimerEnd = &start, &end
	}
	if rng.IntN(50) == 0 {
		t := at(rng, w.created.Add(time.Hour), 7*24*time.Hour)
		st.UnanchorsAt = &t
	}
}

// vulWindows is an old-style (v1) weekly schedule: the three hours around
// hour on every day, 21 hours in all.
func vulWindows(hour int) []snapshots.Window {
	out := make([]snapshots.Window, 0, 21)
	for day := range 7 {
		for d := -1; d <= 1; d++ {
			out = append(out, snapshots.Window{Day: day, Hour: (hour + d + 24) % 24})
		}
	}
	return out
}

// access lists who may use a structure of corporation c (see accessMembers).
func (w *world) access(c int64) []int64 {
	n := min(w.corpSize(c), accessMembers)
	ids := make([]int64, 0, n+accessAllies)
	for k := range n {
		ids = append(ids, w.charIDs.id(w.member(c, k)))
	}
	if a := w.corpAlliance[c]; a >= 0 {
		allies := 0
		for _, other := range w.allianceCorps[a] {
			if allies == accessAllies {
				break
			}
			if int64(other) != c {
				ids = append(ids, w.charIDs.id(w.member(int64(other), 0)))
				allies++
			}
		}
	}
	slices.Sort(ids)
	return ids
}
