package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// eveLaunch is the first day any character could be born.
var eveLaunch = time.Date(2003, 5, 6, 0, 0, 0, 0, time.UTC)

// newRangeStart is when character IDs moved to the 2,112,000,000 range.
var newRangeStart = time.Date(2016, 6, 1, 0, 0, 0, 0, time.UTC)

// world is the shape of the generated population, decided before any
// record is written and small enough to hold for any size: per corporation
// its block of member positions and its alliance, per alliance its
// corporations. Everything per character is computed from its index.
type world struct {
	seed    uint64
	created time.Time

	nChars, nCorps, nAlliances, nStructures int64

	charIDs     charIDs
	corpIDs     idSpace
	allianceIDs idSpace
	members     perm

	// corpStart[c] is the first member position of corporation c;
	// corpStart[nCorps] == nChars.
	corpStart []int64
	// corpAlliance[c] is the alliance index of corporation c, or -1.
	corpAlliance []int32
	// allianceCorps[a] lists the corporations of alliance a, executor first.
	allianceCorps [][]int32
	// corpTickers is filled while corporations are written; structure
	// names use them.
	corpTickers []string

	systems []system
}

// system is a solar system a structure may be anchored in.
type system struct {
	id   int64
	name string
}

func newWorld(cfg *Config, systems []system) (*world, error) {
	if err := checkCounts(cfg); err != nil {
		return nil, err
	}
	cids, err := newCharIDs(cfg.Seed, cfg.Characters)
	if err != nil {
		return nil, err
	}
	w := &world{
		seed:        cfg.Seed,
		created:     cfg.Created,
		nChars:      cfg.Characters,
		nCorps:      cfg.Corporations,
		nAlliances:  cfg.Alliances,
		nStructures: cfg.Structures,
		charIDs:     cids,
		corpIDs:     newIDSpace(cfg.Seed, saltCorpID, corpLo, corpHi, cfg.Corporations),
		allianceIDs: newIDSpace(cfg.Seed, saltAllianceID, allianceLo, allianceHi, cfg.Alliances),
		members:     newPerm(cfg.Seed, cfg.Characters),
		systems:     systems,
	}
	w.corpStart = corpSizes(cfg.Seed, cfg.Characters, cfg.Corporations)
	w.corpAlliance, w.allianceCorps = joinAlliances(cfg.Seed, cfg.Corporations, cfg.Alliances)
	return w, nil
}

// checkCounts rejects populations the model cannot build: every
// corporation needs a CEO, every character a corporation, every alliance
// an executor corporation, every structure an owner.
func checkCounts(cfg *Config) error {
	switch {
	case cfg.Created.Before(eveLaunch.Add(24 * time.Hour)):
		return fmt.Errorf("created %s is before the game was launched (%s)", cfg.Created.Format(time.RFC3339), eveLaunch.Format(time.DateOnly))
	case cfg.Characters < 0 || cfg.Corporations < 0 || cfg.Alliances < 0 || cfg.Structures < 0:
		return fmt.Errorf("counts must not be negative")
	case cfg.Corporations > cfg.Characters:
		return fmt.Errorf("%d corporations need at least as many characters (each has a CEO), got %d", cfg.Corporations, cfg.Characters)
	case cfg.Characters > 0 && cfg.Corporations == 0:
		return fmt.Errorf("%d characters need at least one corporation", cfg.Characters)
	case cfg.Alliances > cfg.Corporations:
		return fmt.Errorf("%d alliances need at least as many corporations (each has an executor), got %d", cfg.Alliances, cfg.Corporations)
	case cfg.Structures > 0 && cfg.Corporations == 0:
		return fmt.Errorf("%d structures need at least one corporation to own them", cfg.Structures)
	case cfg.Corporations > maxCorporations:
		return fmt.Errorf("%d corporations do not fit the corporation ID range (at most %d)", cfg.Corporations, maxCorporations)
	case cfg.Alliances > maxAlliances:
		return fmt.Errorf("%d alliances do not fit the alliance ID range (at most %d)", cfg.Alliances, maxAlliances)
	}
	return nil
}

// corpSizes splits n characters over m corporations with a heavy tail, as
// in the game: most corporations are a handful of pilots, a few are
// thousands. It returns the prefix sums (len m+1).
func corpSizes(seed uint64, n, m int64) []int64 {
	start := make([]int64, m+1)
	if m == 0 {
		return start
	}
	weights := make([]float64, m)
	var total float64
	for c := range weights {
		// Pareto(alpha 1.1), capped so one corporation cannot swallow all.
		u := (float64(mix(seed, saltCorpSize, uint64(c))>>11) + 1) / (1 << 53)
		weights[c] = math.Min(math.Pow(u, -1/1.1), 5000)
		total += weights[c]
	}
	spare := n - m // each corporation has at least its CEO
	sizes := make([]int64, m)
	var given int64
	for c, wt := range weights {
		sizes[c] = 1 + int64(float64(spare)*wt/total)
		given += sizes[c] - 1
	}
	// Rounding down leaves fewer than m characters; the first corporations take them.
	for c := int64(0); given < spare; c++ {
		sizes[c]++
		given++
	}
	for c, size := range sizes {
		start[c+1] = start[c] + size
	}
	return start
}

// joinAlliances puts about two in five corporations (and at least one per
// alliance) into alliances of heavy-tailed size.
func joinAlliances(seed uint64, m, k int64) ([]int32, [][]int32) {
	corpAlliance := make([]int32, m)
	for c := range corpAlliance {
		corpAlliance[c] = -1
	}
	if k == 0 {
		return corpAlliance, nil
	}
	rng := rand.New(rand.NewPCG(seed, saltAlliancePick))
	order := rng.Perm(int(m))
	joined := min(max(k, m*2/5), m)

	cum := make([]float64, k)
	var total float64
	for a := range cum {
		total += math.Min(math.Pow(1-rng.Float64(), -1/1.2), 2000)
		cum[a] = total
	}
	corps := make([][]int32, k)
	for i := int64(0); i < joined; i++ {
		c := int32(order[i])
		a := int(i) // the first k joiners are the executors
		if i >= k {
			a = sort.SearchFloat64s(cum, rng.Float64()*total)
			a = min(a, int(k-1))
		}
		corpAlliance[c] = int32(a)
		corps[a] = append(corps[a], c)
	}
	for _, cs := range corps {
		rest := cs[1:]
		sort.Slice(rest, func(i, j int) bool { return rest[i] < rest[j] })
	}
	return corpAlliance, corps
}

// corpOf returns the corporation index of character index j.
func (w *world) corpOf(j int64) int64 {
	pos := w.members.forward(j)
	return int64(sort.Search(int(w.nCorps), func(c int) bool { return w.corpStart[c+1] > pos }))
}

// corpSize is the member count of corporation c.
func (w *world) corpSize(c int64) int64 { return w.corpStart[c+1] - w.corpStart[c] }

// member returns the character index of the k-th member of corporation c;
// member 0 is the CEO.
func (w *world) member(c, k int64) int64 { return w.members.backward(w.corpStart[c] + k) }

// isCEO reports whether character index j is the CEO of corporation c.
func (w *world) isCEO(j, c int64) bool { return w.members.forward(j) == w.corpStart[c] }

func (w *world) allianceID(c int64) int64 {
	if a := w.corpAlliance[c]; a >= 0 {
		return w.allianceIDs.id(int64(a))
	}
	return 0
}

// birthday grows with the character index, as IDs are handed out in
// creation order; the two ID ranges map to the two eras (before and after
// mid-2016).
func (w *world) birthday(j int64) time.Time {
	frac := float64(mix(w.seed, saltCharID+7, uint64(j))>>11) / (1 << 53)
	// A snapshot "created" before 2016 squeezes both eras before that day.
	mid := newRangeStart
	if w.created.Before(mid) {
		mid = eveLaunch.Add(w.created.Sub(eveLaunch) / 2)
	}
	lo, hi, k, n := eveLaunch, mid, j, w.charIDs.n1
	if j >= w.charIDs.n1 {
		lo, hi, k, n = mid, w.created, j-w.charIDs.n1, w.nChars-w.charIDs.n1
	}
	span := hi.Sub(lo).Seconds()
	return lo.Add(time.Duration(span*(float64(k)+frac)/float64(n)) * time.Second)
}

// corpFounded is after its CEO's birthday and not after the snapshot.
func (w *world) corpFounded(c int64) time.Time {
	born := w.birthday(w.member(c, 0))
	room := w.created.Sub(born)
	if room <= 0 {
		return born
	}
	delay := time.Duration(below(mix(w.seed, saltCorpFounded, uint64(c)), uint64(min(room, 2*365*24*time.Hour)/time.Second))) * time.Second
	return born.Add(delay)
}

// allianceFounded is after its executor corporation was founded.
func (w *world) allianceFounded(a int64) time.Time {
	base := w.corpFounded(int64(w.allianceCorps[a][0]))
	room := w.created.Sub(base)
	if room <= 0 {
		return base
	}
	return base.Add(time.Duration(below(mix(w.seed, saltCorpFounded+100, uint64(a)), uint64(room/time.Second))) * time.Second)
}
