package ratelimit

import "testing"

// FuzzParseSpec: --rate-limit is refused or yields budgets within bounds
// whose X-Ratelimit-Limit form parses back to the same budget.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"off", "search=1200/5m", "search=10/3s,static-data=7200/15m", "a=2/24h", "search=1/5m",
		"search=10/0s", "search=10/25h", "=10/5m", "search=10", "search=10/5m,search=2/1m", " off ", "x=60000/1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec(s)
		if err != nil {
			return
		}
		if spec.Off != (len(spec.Groups) == 0) {
			t.Fatalf("ParseSpec(%q) = %+v: off with groups, or neither", s, spec)
		}
		for g, l := range spec.Groups {
			if !validGroupName(g) || l.check() != nil {
				t.Fatalf("ParseSpec(%q): group %q budget %+v out of bounds", s, g, l)
			}
			back, err := ParseLimit(l.String())
			if err != nil || back != l {
				t.Fatalf("ParseSpec(%q): %q parses back to %+v, %v; want %+v", s, l.String(), back, err, l)
			}
		}
	})
}
