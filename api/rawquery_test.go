package api

import (
	"net/url"
	"testing"
)

// FuzzQueryLookup holds the query-string reader to url.ParseQuery's
// answers: the same error, and for every parameter the same count and
// first value.
func FuzzQueryLookup(f *testing.F) {
	for _, q := range []string{
		"", "search=jita&categories=character,solar_system", "search=Faisal+Ulfaheim&strict=true",
		"categories=a&categories=b", "%73earch=x&search=y", "search=%zz", "a=1;b=2", "search=%",
		"search=%4", "=x&&search=&search", "s%2Bx=1&s+x=2", "search=%E2%82%AC", "token=abc&search=a%20b",
	} {
		f.Add(q, "search")
	}
	f.Fuzz(func(t *testing.T, q, name string) {
		want, wantErr := url.ParseQuery(q)
		err := queryError(q)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("queryError(%q) = %v, url.ParseQuery: %v", q, err, wantErr)
		}
		if err != nil {
			return
		}
		for _, k := range append([]string{name}, keys(want)...) {
			v, n := lookupQuery(q, k)
			if n != len(want[k]) || n > 0 && v != want[k][0] {
				t.Fatalf("lookupQuery(%q, %q) = %q, %d; url.ParseQuery: %q", q, k, v, n, want[k])
			}
		}
	})
}

func keys(v url.Values) []string {
	out := make([]string, 0, len(v))
	for k := range v {
		out = append(out, k)
	}
	return out
}

// TestCategoriesFitBitSet: parseCategories marks categories in a uint64.
func TestCategoriesFitBitSet(t *testing.T) {
	if len(characterCategories) > 64 || len(publicCategories) > 64 {
		t.Fatalf("%d categories: parseCategories' bit set holds 64", len(characterCategories))
	}
}
