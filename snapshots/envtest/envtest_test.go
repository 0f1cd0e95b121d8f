package envtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestGetenv(t *testing.T) {
	t.Setenv("GDS_ENVTEST_A", "a")
	t.Setenv("GDS_ENVTEST_B", "b")
	if got := Getenv(t, "two values", "GDS_ENVTEST_A", "GDS_ENVTEST_B"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Getenv = %q, want [a b]", got)
	}
	t.Setenv("GDS_ENVTEST_B", "")
	t.Run("one unset", func(t *testing.T) {
		defer func() {
			if !t.Skipped() {
				t.Error("Getenv did not skip with GDS_ENVTEST_B unset")
			}
		}()
		Getenv(t, "two values", "GDS_ENVTEST_A", "GDS_ENVTEST_B")
	})
}

func TestQueryTexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queries.json")
	set := `[{"text":"ari","strict":false,"class":"short","want":500},{"text":"Jita","strict":true},{"text":"O'm","class":"punct"}]`
	if err := os.WriteFile(path, []byte(set), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := ContainsTexts(t, path); !slices.Equal(got, []string{"ari", "O'm"}) {
		t.Errorf("ContainsTexts = %q, want [ari O'm]", got)
	}
	if got := StrictTexts(t, path); !slices.Equal(got, []string{"Jita"}) {
		t.Errorf("StrictTexts = %q, want [Jita]", got)
	}
}

func TestRequestPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "route-suggest,.lua")
	list := "paths = {\n  \"/latest/suggest/?search=jta\",\n  \"/latest/suggest/?search=K%C3%A4ri&categories=character\",\n}\n"
	if err := os.WriteFile(path, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"/latest/suggest/?search=jta", "/latest/suggest/?search=K%C3%A4ri&categories=character"}
	if got := RequestPaths(t, path); !slices.Equal(got, want) {
		t.Errorf("RequestPaths = %q, want %q", got, want)
	}
}
