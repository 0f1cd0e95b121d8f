package nametable_test

import (
	"testing"

	"gds/indexer/nametable"
)

// The folds a person typing plain letters relies on, each on the slow
// (non-ASCII) path, and the token filter bleve uses agreeing with them.
func TestFold(t *testing.T) {
	cases := []struct{ in, want string }{
		{"JITA", "jita"},
		{"Straße", "strasse"},    // sharp s
		{"ẞ", "ss"},              // capital sharp s
		{"Σίσυφος", "σίσυφοσ"},   // final sigma
		{"ΣΊΣΥΦΟΣ", "σίσυφοσ"},   // upper case, same fold
		{"İlkay", "ilkay"},       // Turkish dotted capital I: plain i
		{"I\u0307lkay", "ilkay"}, // its decomposed spelling
		{"ILKAY", "ilkay"},
		{"İSTANBUL", "istanbul"},
		{"Ünïcode", "ünïcode"},
		{"U\u0308nïcode", "ünïcode"}, // decomposed umlaut composes
		{"ı", "ı"},                   // dotless i stays itself
	}
	for _, c := range cases {
		if got := nametable.Fold(c.in); got != c.want {
			t.Errorf("Fold(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := string(nametable.AppendFold([]byte("x"), c.in)); got != "x"+c.want {
			t.Errorf("AppendFold(x, %q) = %q, want %q", c.in, got, "x"+c.want)
		}
	}
}

// FuzzAppendFold: AppendFold appends what Fold returns, whatever the text.
func FuzzAppendFold(f *testing.F) {
	for _, s := range []string{"JITA", "Straße", "İlkay", "a\xffB", "", "Alpha Pilot"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(nametable.AppendFold([]byte("<"), s)), "<"+nametable.Fold(s); got != want {
			t.Fatalf("AppendFold(%q) = %q, want %q", s, got, want)
		}
	})
}
