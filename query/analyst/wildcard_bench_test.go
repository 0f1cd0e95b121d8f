package analyst_test

import (
	"context"
	"testing"

	"gds/query/analyst"
	"gds/snapshots"
	"gds/snapshots/envtest"
)

// benchPatterns are the bench's wildcard class (query/bench): infixes
// matching from tens of thousands to millions of characters; and
// prefixes of four letters, as its prefix class.
var benchPatterns = []string{"*ari*", "*aki*", "*tan*", "*ikk*", "*luc*", "*ode*", "*esa*", "*lfs*", "*ebi*", "*ave*",
	"kari*", "mari*", "tana*", "luca*", "dark*"}

// BenchmarkWildcardTables runs each of the bench's wildcard queries
// (name:*ari*, 20 hits and the total, over the characters) and a few
// prefixes (name:kari*) through the
// analysts' engine on the live generation of an existing data directory,
// warm. It only runs when one is named:
//
//	GDS_BENCH_DATA=/path/data go test -run '^$' -bench WildcardTables -benchtime 10x ./query/analyst
func BenchmarkWildcardTables(b *testing.B) {
	e, err := analyst.Open(envtest.Getenv(b, "a data directory", "GDS_BENCH_DATA")[0])
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, p := range benchPatterns {
		req := analyst.Request{Query: "name:" + p, Category: snapshots.CategoryCharacter}
		b.Run(p, func(b *testing.B) {
			var total uint64
			for b.Loop() {
				res, err := e.Query(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				total = res.Total
			}
			b.ReportMetric(float64(total), "total")
		})
	}
}
