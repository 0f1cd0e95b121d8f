package typo

import (
	"path/filepath"
	"testing"
)

// BenchmarkSearch: one-edit typos (MisspellSet) of 200,000 names as
// players write them, each searched for its top ten.
//
//	go test -run X -bench . ./indexer/typo
func BenchmarkSearch(b *testing.B) {
	ns := testNames(200000, 11)
	x := writeIndex(b, ns, nil)
	in := make([]Named, len(ns))
	for i, n := range ns {
		in[i] = Named{ID: int64(i), Name: n}
	}
	set := MisspellSet(in, 1000, 8, 1)
	b.ResetTimer()
	hits := 0
	for i := 0; b.Loop(); i++ {
		m := set[i%len(set)]
		if found(x.Search([]byte(m.Text), ns, nil, 10), uint32(m.ID)) {
			hits++
		}
	}
	b.ReportMetric(float64(hits)/float64(b.N), "found/op")
}

// BenchmarkWrite: the typo index of 200,000 names.
func BenchmarkWrite(b *testing.B) {
	ns := testNames(200000, 11)
	dir := b.TempDir()
	for b.Loop() {
		if err := Write(filepath.Join(dir, "x.typ"), ns, nil); err != nil {
			b.Fatal(err)
		}
	}
}
