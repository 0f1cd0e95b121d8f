//go:build bench

package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/indexer/typo"
)

// Tests of the harness's own helpers (go test -tags bench -run
// 'TestTypos|TestExponent|TestReadSummary|TestNginxQuote|TestMedian|TestCeilings' ./query/bench).

func TestTyposAreOneEditOfLongNames(t *testing.T) {
	var names []string
	for i := range 3000 {
		names = append(names, "Pilot"+strconv.Itoa(i)+strings.Repeat("x", i%7))
	}
	names = append(names, "Short", "Ünïcödé Nämé", "ab")
	texts, of := typos(names, 1000, 7)
	if len(texts) != 1000 || len(of) != 1000 {
		t.Fatalf("%d typos of %d names, want 1000", len(texts), len(of))
	}
	seen := map[int]bool{}
	for i, text := range texts {
		name := names[of[i]]
		if n := len([]rune(name)); n < 8 {
			t.Errorf("typo %q of %q: a name of %d characters", text, name, n)
		}
		x, y := []rune(name), []rune(text)
		if d := typo.Distance(x, y, len(x)+len(y)); d != 1 {
			t.Errorf("typo %q of %q: %d edits, want 1", text, name, d)
		}
		if seen[of[i]] {
			t.Errorf("name %q drawn twice", name)
		}
		seen[of[i]] = true
	}
	again, _ := typos(names, 1000, 7)
	if !slices.Equal(texts, again) {
		t.Error("the same seed made other typos")
	}
}

func TestExponent(t *testing.T) {
	for _, c := range []struct {
		c1, c2 float64
		n1, n2 int64
		want   string
	}{
		{10, 100, 1_000_000, 10_000_000, "1.00"},
		{10, 10, 1_000_000, 10_000_000, "0.00"},
		{4, 16, 100, 200, "2.00"},
		{0, 16, 100, 200, "-"},
		{4, 16, 100, 100, "-"},
	} {
		if got := exponent(c.c1, c.c2, c.n1, c.n2); got != c.want {
			t.Errorf("exponent(%v, %v, %d, %d) = %s, want %s", c.c1, c.c2, c.n1, c.n2, got, c.want)
		}
	}
	want := math.Log(3) / math.Log(5)
	if got := exponent(1, 3, 1, 5); got != strconv.FormatFloat(want, 'f', 2, 64) {
		t.Errorf("exponent(1, 3, 1, 5) = %s, want %.2f", got, want)
	}
}

// readSummary reads back what a run wrote and refuses a file that names
// no size, as -curve-of needs.
func TestReadSummary(t *testing.T) {
	dir := t.TempDir()
	want := summary{Names: 1_000_000, Rows: "build", BuildWall: 8 * time.Second, Disk: 218 << 20, ContainsCPU: 58 * time.Microsecond}
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	good, empty := filepath.Join(dir, "summary.json"), filepath.Join(dir, "empty.json")
	if err := os.WriteFile(good, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte(`{"rows":"build"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := readSummary(good); err != nil || got != want {
		t.Errorf("readSummary = %+v, %v; want %+v", got, err, want)
	}
	for _, path := range []string{empty, filepath.Join(dir, "missing.json")} {
		if _, err := readSummary(path); err == nil {
			t.Errorf("readSummary(%s) took it", path)
		}
	}
}

func TestNginxQuote(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:  `'{"a":1}'`,
		`O'Neil`:   `'O\'Neil'`,
		`a\b`:      `'a\\b'`,
		`$5 $name`: `'${dollar}5 ${dollar}name'`,
	} {
		if got := nginxQuote(in); got != want {
			t.Errorf("nginxQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestMedianIsTheMiddleSize(t *testing.T) {
	var as []answer
	for _, size := range []int{50, 10, 40, 20, 30} {
		as = append(as, answer{Size: size})
	}
	if m := median(as); m.Size != 30 {
		t.Errorf("median of sizes 10..50 = %d, want 30", m.Size)
	}
	if m := median(as[:4]); m.Size != 20 {
		t.Errorf("lower median of 10, 20, 40, 50 = %d, want 20", m.Size)
	}
	if as[0].Size != 50 {
		t.Error("median reordered its argument")
	}
}

// preparedAnswer is a JSON answer with gds-like headers, one of them
// holding characters nginx's configuration must escape.
func preparedAnswer() answer {
	body := []byte(`[{"id":90000001,"name":"O'Neil $HOME \\ Pilot"}]`)
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Etag", `"abc$def"`)
	return answer{Status: http.StatusOK, Header: h, Body: body}
}

// largeAnswer is preparedAnswer's body repeated past one parameter of
// nginx's configuration (4,096 bytes), with characters of several bytes
// where a part could split them.
func largeAnswer() answer {
	an := preparedAnswer()
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < 3*nginxToken; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":` + strconv.Itoa(90000000+i) + `,"name":"O'Neil $HOME \\ Ünïcödé 名前"}`)
	}
	b.WriteByte(']')
	an.Body = b.Bytes()
	return an
}

// TestCeilingsServeThePreparedAnswer starts both ceilings on two answers,
// one longer than a parameter of nginx's configuration, and asks each for
// a GET and a POST of another path: every request gets the prepared status
// and body (run with nginx installed: make bench-deps).
func TestCeilingsServeThePreparedAnswer(t *testing.T) {
	fixed := []ceilingAnswer{{Name: "s", Answer: preparedAnswer()}, {Name: "large", Answer: largeAnswer()}}
	c, err := startCeiling(t.TempDir(), "test", fixed)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	ngx, err := startNginx(t.TempDir(), fixed)
	if err != nil {
		t.Fatal(err)
	}
	defer ngx.stop()
	reqs := []string{"/latest/search/?search=a", postTypedRequest("/latest/local/", "text/plain", "a\nb"), postRequest("/x/", "[1]")}
	for _, ca := range fixed {
		an := ca.Answer
		for name, addr := range map[string]string{"net/http": c.addrs[ca.Name], "nginx": ngx.addrs[ca.Name]} {
			got, err := capture(addr, reqs)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, ca.Name, err)
			}
			for i, g := range got {
				if g.Status != an.Status || !bytes.Equal(g.Body, an.Body) || g.Header.Get("Etag") != an.Header.Get("Etag") ||
					g.Header.Get("Content-Type") != an.Header.Get("Content-Type") {
					t.Errorf("%s, %s, %q: %d %.200q %v", name, ca.Name, reqs[i], g.Status, g.Body, g.Header)
				}
			}
		}
	}
}
