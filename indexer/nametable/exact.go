package nametable

import (
	"hash/fnv"
	"slices"

	"gds/snapshots/disk"
)

// Exact lookups: the name hash table (slots) and the duplicate-name
// index, which strict searches, locals and name resolution read, and
// which the typo index's firsts are made from (Repeats).

// fetch reads the IDs and the starts of the names of the ordinals in
// batch and returns a byte of what it read, for the caller to keep (so
// that the reads stay). The loads of one pass do not depend on one
// another, so their cache misses overlap, where verifying one name after
// another would wait for each in turn: one pass over the cells
// (GDSTBL04), or over the name offsets (with the IDs beside them,
// GDSTBL03) and then the names.
func (t *Table) fetch(batch []uint32) byte {
	var touch byte
	if t.cells {
		for _, o := range batch {
			touch += t.cl.cells[t.cl.cellOf(o)+4]
		}
		return touch
	}
	var off uint32
	for _, o := range batch {
		if t.recs != nil {
			off += t.recs[2*o+1]
		} else {
			off += t.offsets[o]
		}
	}
	touch = byte(off)
	for _, o := range batch {
		if name := t.Name(o); len(name) > 0 {
			touch += name[0] + byte(t.ID(o))
		}
	}
	return touch
}

// Warm reads what Exact reads first for each of texts (its slot and the
// name there) and returns a byte of what it read, for the caller to keep.
// The loads of one pass do not depend on one another, so their cache
// misses overlap; Exact on each text then finds them in the cache.
func (t *Table) Warm(texts [][]byte) byte {
	if len(t.slots) == 0 {
		return 0
	}
	mask := uint64(len(t.slots) - 1)
	var touch byte
	var batch [64]uint32
	for len(texts) > 0 {
		chunk := texts[:min(len(texts), len(batch))]
		texts = texts[len(chunk):]
		n := 0
		for _, text := range chunk {
			if v := t.slots[hashName(text)&mask]; v != 0 {
				batch[n] = v - 1
				n++
			}
		}
		touch += t.fetch(batch[:n]) + t.warmDups(batch[:n])
	}
	return touch
}

// findDup is the index in dupKeys of ordinal o, if it is there: the last
// key not above o, found by halving the range with conditional moves
// rather than branches.
func (t *Table) findDup(o uint32) (int, bool) {
	base, n := 0, len(t.dupKeys)
	if n == 0 || t.dupBits != nil && t.dupBits[o>>6]&(1<<(o&63)) == 0 {
		return 0, false
	}
	for n > 1 {
		half, step := n/2, 0
		if t.dupKeys[base+half] <= o {
			step = half
		}
		base += step
		n -= half
	}
	return base, t.dupKeys[base] == o
}

// warmDups makes findDup's reads for the ordinals in batch, a step of
// every search at a time: the reads of a step do not depend on one
// another, so that their cache misses overlap, where a search of
// millions of keys would wait for each of its deeper reads in turn.
// Then, for those that have namesakes, it reads where their lists are
// and the lists' first ordinals and IDs, again a step at a time.
func (t *Table) warmDups(batch []uint32) byte {
	if !t.grouped || len(t.dupKeys) == 0 {
		return 0
	}
	var touch byte
	var shared [64]uint32
	if t.dupBits != nil { // only the ordinals whose bit is set search dupKeys
		n := 0
		for _, o := range batch {
			w := t.dupBits[o>>6]
			touch += byte(w)
			if w&(1<<(o&63)) != 0 {
				shared[n] = o
				n++
			}
		}
		batch = shared[:n]
	}
	var base [64]int
	for n := len(t.dupKeys); n > 1; {
		half := n / 2
		for k, o := range batch {
			step := 0
			if t.dupKeys[base[k]+half] <= o {
				step = half
			}
			base[k] += step
		}
		n -= half
	}
	var off [64]uint32
	n := 0
	for k, o := range batch {
		if j := base[k]; t.dupKeys[j] == o && t.dupOffs[2*j+1] > 0 {
			off[n] = t.dupOffs[2*j]
			n++
		}
	}
	for _, at := range off[:n] {
		touch += byte(t.dupList[at])
		if t.dupIDs != nil {
			touch += byte(t.dupIDs[at])
		}
	}
	return touch
}

// Exact calls fn with the ordinals whose folded name equals text, in
// ascending order, and their IDs.
func (t *Table) Exact(text []byte, fn func(o uint32, id int64) bool) {
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	if t.grouped {
		for i := hashName(text) & mask; ; i = (i + 1) & mask {
			v := t.slots[i]
			if v == 0 {
				return
			}
			o := v - 1
			if string(t.Name(o)) != string(text) {
				continue
			}
			if j, ok := t.findDup(o); ok {
				t.namesakes(j, fn)
				return
			}
			fn(o, t.ID(o))
			return
		}
	}
	var found [8]uint32
	hits := found[:0]
	for i := hashName(text) & mask; ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == 0 {
			break
		}
		if string(t.Name(v-1)) == string(text) {
			hits = append(hits, v-1)
		}
	}
	slices.Sort(hits)
	for _, o := range hits {
		if !fn(o, t.ID(o)) {
			return
		}
	}
}

// namesakes calls fn with the ordinals of duplicate group j and their
// IDs, until fn returns false: the IDs from dupIDs where the table has
// them (GDSTBL06), else each from its ordinal's cell.
func (t *Table) namesakes(j int, fn func(o uint32, id int64) bool) {
	off, n := t.dupOffs[2*j], t.dupOffs[2*j+1]
	list := t.dupList[off : off+n]
	if t.dupIDs == nil {
		for _, o := range list {
			if !fn(o, t.ID(o)) {
				return
			}
		}
		return
	}
	ids := t.dupIDs[off : off+n]
	for k, o := range list {
		if !fn(o, t.idBase+int64(ids[k])) {
			return
		}
	}
}

// Repeats calls fn with every ordinal whose folded name a lower ordinal
// has too (each name's ordinals but its first), from the duplicate-name
// index. It reports false, calling fn with none, for a table without one
// (before GDSTBL02), whose repeats it cannot tell without reading every
// name.
func (t *Table) Repeats(fn func(o uint32)) bool {
	if !t.grouped {
		return false
	}
	for i := range t.dupKeys {
		off, n := t.dupOffs[2*i], t.dupOffs[2*i+1]
		for _, o := range t.dupList[off : off+n] {
			if o != t.dupKeys[i] {
				fn(o)
			}
		}
	}
	return true
}

// markDups makes dupBits from dupKeys.
func (t *Table) markDups() error {
	if !t.grouped || len(t.dupKeys) == 0 {
		return nil
	}
	mem, free, err := disk.Anon(8 * ((t.n + 63) / 64))
	if err != nil {
		return err
	}
	bits := disk.FromBytes[uint64](mem)
	for _, o := range t.dupKeys {
		bits[o>>6] |= 1 << (o & 63)
	}
	t.dupBits, t.freeDupBits = bits, free
	return nil
}

// hashName places a folded name in the strict-search hash table.
func hashName(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}
