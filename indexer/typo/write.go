package typo

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"gds/snapshots/disk"
)

// Write builds the typo index of a table's names and writes it to path
// atomically. names are the table's folded names in ordinal order;
// tickers, when not nil, the folded ticker of each ordinal ("" for none).
func Write(path string, names []string, tickers []string) error {
	return WriteEach(path, len(names), func(o int) string { return names[o] }, tickers)
}

// WriteEach is Write of the n names name gives by ordinal, for a caller
// that holds them in a form of its own (a table's entries) rather than a
// slice of them.
func WriteEach(path string, n int, name func(o int) string, tickers []string) error {
	if tickers != nil && len(tickers) != n {
		return fmt.Errorf("typo index %s: %d tickers for %d names", path, len(tickers), n)
	}
	if uint64(n) > 1<<32-1 {
		return fmt.Errorf("typo index %s: too many names", path)
	}
	words, wordOffs, postOffs, posts := postingsOf(n, name)
	buckets, deletes := neighbourhood(words, wordOffs)
	tickOffs, ticks, tickOrds := tickerList(tickers)
	secs := [secCount][]byte{
		secWordOffs: asBytes(wordOffs),
		secWords:    words,
		secPostOffs: asBytes(postOffs),
		secPosts:    asBytes(posts),
		secBuckets:  asBytes(buckets),
		secDeletes:  asBytes(deletes),
		secTickOffs: asBytes(tickOffs),
		secTicks:    ticks,
		secTickOrds: asBytes(tickOrds),
	}
	if err := writeFile(path, uint64(n), &secs); err != nil {
		return fmt.Errorf("typo index %s: %w", path, err)
	}
	return nil
}

// postingsOf returns the distinct words of the n names, sorted (their
// bytes and offsets), and per word the ascending ordinals of the names
// holding it.
func postingsOf(n int, name func(o int) string) (words []byte, wordOffs, postOffs, posts []uint32) {
	ids := map[string]uint32{}
	var byID []string
	pairs := make([]uint64, 0, 2*n) // word (in first-seen order) << 32 | ordinal
	for o := range n {
		first := len(pairs)
		eachWord([]byte(name(o)), func(w []byte, _ int) {
			id, ok := ids[string(w)]
			if !ok {
				id = uint32(len(byID))
				s := string(w)
				ids[s] = id
				byID = append(byID, s)
			}
			p := uint64(id)<<32 | uint64(o)
			if !slices.Contains(pairs[first:], p) { // a word twice in one name
				pairs = append(pairs, p)
			}
		})
	}
	ids = nil
	order := make([]uint32, len(byID)) // sorted position → first-seen id
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(byID[a], byID[b]) })
	rank := make([]uint32, len(byID)) // first-seen id → sorted position
	wordOffs = make([]uint32, 0, len(byID)+1)
	for pos, id := range order {
		rank[id] = uint32(pos)
		wordOffs = append(wordOffs, uint32(len(words)))
		words = append(words, byID[id]...)
	}
	wordOffs = append(wordOffs, uint32(len(words)))
	// A counting sort by sorted word keeps each word's ordinals ascending.
	postOffs = make([]uint32, len(byID)+1)
	for _, p := range pairs {
		postOffs[rank[p>>32]+1]++
	}
	for i := 1; i < len(postOffs); i++ {
		postOffs[i] += postOffs[i-1]
	}
	posts = make([]uint32, len(pairs))
	next := slices.Clone(postOffs[:len(byID)])
	for _, p := range pairs {
		w := rank[p>>32]
		posts[next[w]] = uint32(p)
		next[w]++
	}
	return words, wordOffs, postOffs, posts
}

// neighbourhood returns the deletion entries of every word (hash << 32 |
// word, sorted) and the buckets that index them by the hash's top bits,
// about eight entries a bucket.
func neighbourhood(words []byte, wordOffs []uint32) (buckets []uint32, deletes []uint64) {
	var buf []byte
	var mine []uint64
	for i := range len(wordOffs) - 1 {
		w := words[wordOffs[i]:wordOffs[i+1]]
		n := utf8.RuneCount(w)
		if n < 4 {
			continue
		}
		mine = mine[:0]
		buf = deletions(w, DictDeletes(n), buf, func(h uint32) { mine = append(mine, uint64(h)<<32|uint64(i)) })
		slices.Sort(mine)
		deletes = append(deletes, slices.Compact(mine)...)
	}
	slices.Sort(deletes)
	bits := bitsOf(max(1, len(deletes)/8))
	nb := 1 << bits
	buckets = make([]uint32, nb+1)
	sh := uint(32 - bits)
	for _, e := range deletes {
		buckets[(uint32(e>>32)>>sh)+1]++
	}
	for i := 1; i <= nb; i++ {
		buckets[i] += buckets[i-1]
	}
	return buckets, deletes
}

// tickerList returns the non-empty tickers sorted (then by ordinal), their
// bytes and each one's ordinal.
func tickerList(tickers []string) (offs []uint32, ticks []byte, ords []uint32) {
	for o, t := range tickers {
		if t != "" {
			ords = append(ords, uint32(o))
		}
	}
	slices.SortStableFunc(ords, func(a, b uint32) int { return cmp.Compare(tickers[a], tickers[b]) })
	offs = make([]uint32, 0, len(ords)+1)
	for _, o := range ords {
		offs = append(offs, uint32(len(ticks)))
		ticks = append(ticks, tickers[o]...)
	}
	return append(offs, uint32(len(ticks))), ticks, ords
}

// writeFile writes the header and the sections, each 8-byte aligned, to a
// temporary file beside path, syncs it and renames it into place.
func writeFile(path string, n uint64, secs *[secCount][]byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".typo-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	hdr := append(make([]byte, 0, headerLen), magic...)
	hdr = binary.LittleEndian.AppendUint64(hdr, n)
	off := pad8(uint64(headerLen))
	for _, s := range secs {
		hdr = binary.LittleEndian.AppendUint64(hdr, off)
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(s)))
		off = pad8(off + uint64(len(s)))
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var zeros [8]byte
	written := uint64(0)
	put := func(b []byte) {
		w.Write(b)
		written += uint64(len(b))
		w.Write(zeros[:pad8(written)-written])
		written = pad8(written)
	}
	put(hdr)
	for _, s := range secs {
		put(s)
	}
	if err := disk.SyncClose(f, w); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func pad8(n uint64) uint64 { return (n + 7) &^ 7 }
