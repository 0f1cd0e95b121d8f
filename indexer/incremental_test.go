package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

// world is a mutable data set for a chain of incremental builds.
type world struct {
	rng        *rand.Rand
	characters map[int64]string
	structures map[int64]*snapshots.Structure
	roles      map[int64][]string
	next       int64
}

var syllables = []string{"ani", "kor", "ell", "the", "ara", "jun", "vel", "o'm", " ", "-", "Ä", "ß"}

func (w *world) name() string {
	n := 2 + w.rng.IntN(4)
	s := ""
	for range n {
		s += syllables[w.rng.IntN(len(syllables))]
	}
	return fmt.Sprintf("%s %d", s, w.rng.IntN(100))
}

func newWorld(seed uint64, n int) *world {
	w := &world{rng: rand.New(rand.NewPCG(seed, 1)), characters: map[int64]string{},
		structures: map[int64]*snapshots.Structure{}, roles: map[int64][]string{}, next: 90000000}
	for range n {
		w.addCharacter()
	}
	for i := range n / 10 {
		id := int64(1000000000000 + i)
		w.structures[id] = &snapshots.Structure{ID: id, Name: "Jita - " + w.name(), TypeID: 35832,
			CorporationID: int64(98000001 + i%7), SystemID: 30000142, ProfileID: 1, State: "shield_vulnerable",
			ReinforceWeekday: 2, ReinforceHour: 19, Access: w.someCharacters(3)}
	}
	return w
}

func (w *world) addCharacter() {
	w.next++
	w.characters[w.next] = w.name()
	if w.rng.IntN(10) == 0 {
		w.roles[w.next] = []string{snapshots.RoleStationManager}
	}
}

func (w *world) someCharacters(n int) []int64 {
	var out []int64
	for range n {
		out = append(out, 90000001+int64(w.rng.IntN(int(w.next-90000000))))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (w *world) pick() int64 {
	for {
		id := 90000001 + int64(w.rng.IntN(int(w.next-90000000)))
		if _, ok := w.characters[id]; ok {
			return id
		}
	}
}

// mutate renames, removes and adds about share of the characters and
// changes as many structures (names and access lists) and roles.
func (w *world) mutate(share float64) {
	k := max(1, int(share*float64(len(w.characters))))
	for range k {
		switch w.rng.IntN(4) {
		case 0:
			id := w.pick()
			delete(w.characters, id)
			delete(w.roles, id)
		case 1:
			w.addCharacter()
		default:
			w.characters[w.pick()] = w.name()
		}
	}
	ids := mapsKeys(w.structures)
	slices.Sort(ids)
	for range max(1, k/10) {
		s := *w.structures[ids[w.rng.IntN(len(ids))]]
		if w.rng.IntN(2) == 0 {
			s.Name = "Jita - " + w.name()
		}
		s.Access = w.someCharacters(3)
		w.structures[s.ID] = &s
	}
	for range max(1, k/10) {
		id := w.pick()
		if _, ok := w.roles[id]; ok {
			delete(w.roles, id)
		} else {
			w.roles[id] = []string{"Director", snapshots.RoleStationManager}
		}
	}
}

func mapsKeys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (w *world) snapshot(t *testing.T) string {
	t.Helper()
	recs := indexertest.Records{snapshots.Characters: indexertest.Characters(98000001, w.characters)}
	for _, s := range w.structures {
		recs[snapshots.Structures] = append(recs[snapshots.Structures], s)
	}
	for id, roles := range w.roles {
		recs[snapshots.Roles] = append(recs[snapshots.Roles],
			&snapshots.CharacterRoles{CharacterID: id, CorporationID: 98000001, Roles: roles})
	}
	return indexertest.Snapshot(t, recs)
}

// answers is everything a generation says about a world, for comparing
// an incrementally built generation with a full rebuild.
type answers struct {
	Search     map[string][]int64
	Records    map[string]string
	Structures map[int64][]int64
	IDs        map[string][]int64
}

// probes are the texts searched and the characters searching.
func (w *world) probes() (texts []string, viewers []int64) {
	texts = []string{"ani", "ell", "the", "kor ani", "o'm", "- a", "äss", "ssa", "jita - ", "ara 1"}
	ids := mapsKeys(w.characters)
	slices.Sort(ids)
	for _, id := range ids {
		if id%97 == 0 {
			texts = append(texts, w.characters[id])
		}
	}
	return texts, append([]int64{0}, w.someCharacters(12)...)
}

func collect(t *testing.T, m *indexer.Manager, texts []string, viewers []int64) answers {
	t.Helper()
	s := query.New(m)
	a := answers{Search: map[string][]int64{}, Records: map[string]string{}, Structures: map[int64][]int64{}, IDs: map[string][]int64{}}
	for _, text := range texts {
		for _, strict := range []bool{false, true} {
			for _, c := range viewers {
				res, err := s.Search(context.Background(), query.Request{Text: text, Strict: strict, CharacterID: c,
					Categories: []snapshots.Category{snapshots.CategoryCharacter, snapshots.CategoryStructure}})
				if err != nil {
					t.Fatal(err)
				}
				for cat, ids := range res.IDs {
					a.Search[fmt.Sprintf("%s/%v/%d/%s", text, strict, c, cat)] = ids
				}
			}
		}
	}
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, kind := range []snapshots.Kind{snapshots.Characters, snapshots.Structures, snapshots.Roles} {
		err := v.Each(kind, func(rec snapshots.Record) error {
			raw, err := v.Raw(kind, rec.Key())
			if err != nil {
				return fmt.Errorf("%s %d listed but not found: %w", kind, rec.Key(), err)
			}
			a.Records[fmt.Sprintf("%s/%d", kind, rec.Key())] = string(raw)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for corp := int64(98000001); corp < 98000008; corp++ {
		list, err := v.StructuresOf(corp)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range list {
			a.Structures[corp] = append(a.Structures[corp], st.ID)
		}
	}
	for name, found := range v.IDs(texts, "en") {
		for _, n := range found {
			a.IDs[string(name)] = append(a.IDs[string(name)], n.ID)
		}
		slices.Sort(a.IDs[string(name)])
	}
	return a
}

// TestIncrementalChainEqualsFull builds a chain of incremental generations,
// each from a snapshot a few percent different from the last, and checks
// after every step that searches (contains and strict, every viewer of the
// structures), lookups, structure lists, name resolution and bleve answer
// exactly as a full rebuild of the same snapshot does. Along the way the
// delta tables grow past their limit and are folded back into the base.
// The chain's generations read their tables and record stores into memory
// (as a server does), where each round's generations share the unchanged
// base table's and base store's copies and let go of them as they retire;
// the full builds map theirs.
func TestIncrementalChainEqualsFull(t *testing.T) {
	w := newWorld(3, 3000)
	data := t.TempDir()
	inc := openWith(t, indexer.Options{DataDir: data, TablesInMemory: true, StoresInMemory: true})
	defer inc.Close()
	build(t, inc, w.snapshot(t), false)
	sawDelta, sawFold, sawStoreDelta := false, false, false
	for round, share := range []float64{0.01, 0.02, 0.03, 0.01, 0.04, 0.001} {
		w.mutate(share)
		snap := w.snapshot(t)
		r := build(t, inc, snap, false)
		if !r.Incremental {
			t.Fatalf("round %d: %+v, want an incremental build", round, r)
		}
		full := open(t, t.TempDir())
		build(t, full, snap, true)
		texts, viewers := w.probes()
		got, want := collect(t, inc, texts, viewers), collect(t, full, texts, viewers)
		if !reflect.DeepEqual(got, want) {
			for k, v := range want.Search {
				if !reflect.DeepEqual(got.Search[k], v) {
					t.Errorf("round %d: search %s: incremental %v, full %v", round, k, got.Search[k], v)
				}
			}
			for k, v := range want.Records {
				if got.Records[k] != v {
					t.Errorf("round %d: record %s: incremental %s, full %s", round, k, got.Records[k], v)
				}
			}
			if len(got.Records) != len(want.Records) {
				t.Errorf("round %d: %d records, full build %d", round, len(got.Records), len(want.Records))
			}
			t.Fatalf("round %d: incremental and full generations answer differently (structures %v / %v, ids %v / %v)",
				round, got.Structures, want.Structures, got.IDs, want.IDs)
		}
		for _, q := range []string{"words:ani", "name:\"jita - ani 1\"", "words:renamed", "ell*"} {
			if a, b := bleveIDs(t, inc, q), bleveIDs(t, full, q); !reflect.DeepEqual(a, b) {
				t.Fatalf("round %d: bleve %q: incremental %d hits, full %d", round, q, len(a), len(b))
			}
		}
		full.Close()
		g := inc.Acquire()
		if _, ok := g.Meta.Deltas[snapshots.CategoryCharacter]; ok {
			sawDelta = true
		} else {
			sawFold = sawDelta
		}
		if _, err := os.Stat(filepath.Join(g.Dir(), "records", "characters.delta")); err == nil {
			sawStoreDelta = true
		}
		if n, bounds := g.Meta.Shards[snapshots.CategoryCharacter], g.Meta.ShardBounds[snapshots.CategoryCharacter]; n < 2 || len(bounds) != n-1 || !slices.IsSorted(bounds) {
			t.Errorf("round %d: %d shards with bounds %v, want several shards of ascending key ranges", round, n, bounds)
		}
		raw, _ := json.Marshal(g.Meta.Deltas)
		t.Logf("round %d: %d changed; deltas %s", round, r.Changed, raw)
		g.Release()
	}
	if !sawDelta || !sawFold || !sawStoreDelta {
		t.Errorf("the chain did not exercise delta tables (%v), their folding into the base (%v) and store deltas (%v)", sawDelta, sawFold, sawStoreDelta)
	}
}

// A change too large to patch is found only once the file has been read,
// after some shards were already patched early: those are discarded and
// the category is rebuilt, answering as a full build does.
func TestLargeChangeRebuildsAfterEarlyPatches(t *testing.T) {
	w := newWorld(9, 3000)
	inc := open(t, t.TempDir())
	defer inc.Close()
	build(t, inc, w.snapshot(t), false)
	for range 40 { // concentrated at the end of the key range: early shards patch first
		w.addCharacter()
	}
	w.mutate(0.2)
	snap := w.snapshot(t)
	r := build(t, inc, snap, false)
	if r.Incremental {
		t.Fatalf("a 20%% change was patched: %+v", r)
	}
	full := open(t, t.TempDir())
	defer full.Close()
	build(t, full, snap, true)
	texts, viewers := w.probes()
	if got, want := collect(t, inc, texts, viewers), collect(t, full, texts, viewers); !reflect.DeepEqual(got, want) {
		t.Fatal("after a large change the generation answers differently from a full build")
	}
	for _, q := range []string{"words:ani", "ell*"} {
		if a, b := bleveIDs(t, inc, q), bleveIDs(t, full, q); !reflect.DeepEqual(a, b) {
			t.Fatalf("bleve %q: %d hits, full build %d", q, len(a), len(b))
		}
	}
}
