//go:build browser

package web_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"gds/api/browsertest"
	"gds/snapshots"
)

// TestMeasureTyping measures, in headless Chromium, the time from a
// keystroke (an input event in the search box) to its results painted
// (the frame after they are in the DOM), over distinct queries taken from
// the sample's names. It is not part of make test-browser (its name does
// not start with TestBrowser); run it with
//
//	go test -tags browser -run TestMeasureTyping -v ./api/web
//
// GDS_MEASURE_SNAPSHOT serves another snapshot (e.g. 10M names),
// GDS_MEASURE_N sets the number of queries (200).
func TestMeasureTyping(t *testing.T) {
	n := 200
	if v, err := strconv.Atoi(os.Getenv("GDS_MEASURE_N")); err == nil && v > 0 {
		n = v
	}
	queries := sampleQueries(t, n)
	s := browsertest.Serve(t, browsertest.ServeOptions{Snapshot: os.Getenv("GDS_MEASURE_SNAPSHOT"), ReadyTimeout: 30 * time.Minute})
	b := browsertest.Start(t, browsertest.Options{Timeout: 30 * time.Minute})
	tab := b.NewTab(t)
	tab.Do(t, "open /", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#q")))
	tab.WaitFor(t, "the script", `document.activeElement && document.activeElement.id === 'q'`, wait)

	var total, after []float64
	found := 0
	for i, q := range queries {
		start := time.Now()
		text, _ := json.Marshal(q)
		r := browsertest.Get(t, tab, "query "+q, chromedp.Evaluate[[]float64](`new Promise(res => {
			const q = document.querySelector('#q');
			const t0 = performance.now();
			document.addEventListener('gds:painted', e => res([e.detail.painted - t0, e.detail.painted - e.detail.started,
				document.querySelectorAll('#results a.r').length]), {once: true});
			q.value = `+string(text)+`;
			q.dispatchEvent(new Event('input', {bubbles: true}));
		})`, chromedp.EvalAwaitPromise))
		total, after = append(total, r[0]), append(after, r[1])
		if r[2] > 0 {
			found++
		}
		if i == 0 {
			tab.Screenshot(t, "first-query")
		}
		// One search a second: the page's own sustained budget, so its
		// throttle never adds a wait to what is measured.
		time.Sleep(time.Until(start.Add(1050 * time.Millisecond)))
	}
	tab.CheckClean(t)
	p := func(xs []float64, q float64) float64 {
		s := slices.Sorted(slices.Values(xs))
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	report := fmt.Sprintf("%d queries (%d with results), snapshot %q, %s\n"+
		"keystroke to painted (debounce 200 ms included): p50 %.1f ms, p95 %.1f ms, max %.1f ms\n"+
		"search start to painted (after the debounce):     p50 %.1f ms, p95 %.1f ms, max %.1f ms\n",
		len(queries), found, os.Getenv("GDS_MEASURE_SNAPSHOT"), time.Now().UTC().Format(time.RFC3339),
		p(total, .5), p(total, .95), slices.Max(total), p(after, .5), p(after, .95), slices.Max(after))
	t.Log("\n" + report)
	os.WriteFile(filepath.Join(browsertest.OutDir(t), "report.txt"), []byte(report), 0o644)
}

// sampleQueries are n distinct texts people would type: 3 to 8 characters
// of the sample's names, from their start or inside, in a fixed order.
func sampleQueries(t *testing.T, n int) []string {
	snap, err := snapshots.Open(filepath.Join(browsertest.Root(t), "snapshots", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range []snapshots.Kind{snapshots.SolarSystems, snapshots.Stations, snapshots.Types,
		snapshots.Corporations, snapshots.Characters, snapshots.Alliances} {
		err := snap.Each(k, func(r snapshots.Record, _ snapshots.Line) error {
			if nm, ok := r.(snapshots.Named); ok && utf8.RuneCountInString(nm.DisplayName()) >= 4 {
				names = append(names, nm.DisplayName())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		r := []rune(names[rng.IntN(len(names))])
		l := 3 + rng.IntN(6)
		if l > len(r) {
			l = len(r)
		}
		at := 0
		if rng.IntN(2) == 1 {
			at = rng.IntN(len(r) - l + 1)
		}
		q := string(r[at : at+l])
		if q[0] == ' ' || q[len(q)-1] == ' ' || seen[q] {
			continue
		}
		seen[q] = true
		out = append(out, q)
	}
	return out
}
