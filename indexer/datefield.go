package indexer

import (
	"github.com/blevesearch/bleve/v2/numeric"
	index "github.com/blevesearch/bleve_index_api"
)

// An instant (birthday, fuel_expires) is indexed as bleve's date field
// indexes it, nanoseconds since 1970 prefix-coded, but at the shifts of
// DateShifts only, where bleve writes every fourth one (16 terms a value).
// The instants are whole seconds, about 2^30 ns apart, so bleve's terms
// below shift 32 are all unique: 10M birthdays cost 80M terms, 80% of the
// analysts' build and of their disk. Shift 0 is the value itself (sorts,
// facets and exact matches read it); the other three bucket it at about
// 18 minutes, 3.3 days and 2.3 years. A range is then the terms that exist
// between its edges at each shift (DateRangeTerms): a few hundred at most
// where bleve's own range searcher asks for at most 30 a shift, each of
// which must exist.
var DateShifts = [...]uint{0, 40, 48, 56}

// dateFreqs are the terms of an instant of nanos.
func dateFreqs(nanos int64) index.TokenFrequencies {
	fs := make(index.TokenFrequencies, len(DateShifts))
	for _, s := range DateShifts {
		t := string(numeric.MustNewPrefixCodedInt64(nanos, s))
		fs[t] = newFreq(t)
	}
	return fs
}

// sortable maps an int64 to the uint64 whose order bleve's prefix coding
// keeps (numeric.NewPrefixCodedInt64 codes these bits).
func sortable(v int64) uint64 { return uint64(v) ^ 1<<63 }

// dateBuckets is a run of buckets at one shift: the values v with
// lo <= sortable(v)>>shift <= hi.
type dateBuckets struct {
	shift  uint
	lo, hi uint64
}

// splitDateRange splits the instants from lo to hi (inclusive
// nanoseconds) into runs of buckets at DateShifts: the edges at the finer
// shifts, what lies between them at the coarsest that covers it whole.
// Every value in the range is in exactly one run; no value outside is in
// any.
func splitDateRange(lo, hi int64) []dateBuckets {
	if lo > hi {
		return nil
	}
	var out []dateBuckets
	ulo, uhi := sortable(lo), sortable(hi)
	for i, s := range DateShifts {
		if i == len(DateShifts)-1 {
			return append(out, dateBuckets{s, ulo >> s, uhi >> s})
		}
		next := DateShifts[i+1]
		mask := uint64(1)<<next - 1
		l, h := ulo>>next, uhi>>next
		loPart, hiPart := ulo&mask != 0, uhi&mask != mask
		if l == h {
			if loPart || hiPart { // within one bucket of the next shift
				return append(out, dateBuckets{s, ulo >> s, uhi >> s})
			}
			continue // exactly that bucket
		}
		if loPart {
			out = append(out, dateBuckets{s, ulo >> s, (l<<next | mask) >> s})
			l++
		}
		if hiPart {
			out = append(out, dateBuckets{s, h << next >> s, uhi >> s})
			h--
		}
		if l > h {
			return out
		}
		ulo, uhi = l<<next, h<<next|mask
	}
	return out
}

// dateTerm is the term of bucket b at shift s.
func dateTerm(b uint64, s uint) []byte {
	return numeric.MustNewPrefixCodedInt64(int64(b<<s^1<<63), s)
}

// DateRangeTerms returns the terms of field in r that hold the instants
// from lo to hi (inclusive nanoseconds, as bleve computes a date range's
// bounds): those of the runs splitDateRange makes that r's dictionary has.
// Generations indexed with bleve's every fourth shift hold these terms
// too.
func DateRangeTerms(r index.IndexReader, field string, lo, hi int64) ([][]byte, error) {
	var terms [][]byte
	for _, b := range splitDateRange(lo, hi) {
		d, err := r.FieldDictRange(field, dateTerm(b.lo, b.shift), dateTerm(b.hi, b.shift))
		if err != nil {
			return nil, err
		}
		for {
			e, err := d.Next()
			if err != nil {
				d.Close()
				return nil, err
			}
			if e == nil {
				break
			}
			terms = append(terms, []byte(e.Term))
		}
		if err := d.Close(); err != nil {
			return nil, err
		}
	}
	return terms, nil
}
