// Package envtest holds what the tests and benchmarks over data outside
// the tree share: the environment variables that name that data, and the
// bench harness's query sets and request lists they read.
package envtest

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Getenv returns the values of the environment variables names, in order,
// and skips tb unless every one is set, saying that they name what.
func Getenv(tb testing.TB, what string, names ...string) []string {
	tb.Helper()
	values := make([]string, len(names))
	for i, name := range names {
		values[i] = os.Getenv(name)
	}
	for _, v := range values {
		if v == "" {
			verb := " name "
			if len(names) == 1 {
				verb = " names "
			}
			tb.Skip(strings.Join(names, " and ") + verb + what)
		}
	}
	return values
}

// ContainsTexts reads a bench query set (the harness's queries.json) and
// returns its contains texts, the texts of the queries not strict, in
// order.
func ContainsTexts(tb testing.TB, path string) []string {
	tb.Helper()
	return queryTexts(tb, path, false)
}

// StrictTexts reads a bench query set and returns its strict texts (whole
// names), in order.
func StrictTexts(tb testing.TB, path string) []string {
	tb.Helper()
	return queryTexts(tb, path, true)
}

func queryTexts(tb testing.TB, path string, strict bool) []string {
	tb.Helper()
	var qs []struct {
		Text   string `json:"text"`
		Strict bool   `json:"strict"`
	}
	if err := json.Unmarshal(readFile(tb, path), &qs); err != nil {
		tb.Fatal(err)
	}
	var texts []string
	for _, q := range qs {
		if q.Strict == strict {
			texts = append(texts, q.Text)
		}
	}
	return texts
}

// RequestPaths reads the quoted paths of a harness request list (a Lua
// file, such as route-suggest,.lua); it fails tb when there are none.
func RequestPaths(tb testing.TB, path string) []string {
	tb.Helper()
	var paths []string
	for _, m := range regexp.MustCompile(`"(/[^"]*)"`).FindAllSubmatch(readFile(tb, path), -1) {
		paths = append(paths, string(m[1]))
	}
	if len(paths) == 0 {
		tb.Fatalf("%s lists no paths", path)
	}
	return paths
}

// readFile is the file at path; it fails tb when it cannot be read.
func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}
