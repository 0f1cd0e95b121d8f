//go:build bench

package query_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/nametable"
	"gds/indexer/typo"
	"gds/query"
	"gds/snapshots"
)

// TestSuggestTypos measures the suggest route on the benchmark's typo set
// (typo.MisspellSnapshot: 1,000 one-edit typos of characters' names of 8
// runes or more): recall (the name, in any case, in the top 10) and latency, in process over a
// data directory, or over HTTP against a running gds serve. Behind the
// bench tag; it prints, it asserts nothing about time:
//
//	go test -tags bench -run TestSuggestTypos -v ./query -args \
//	    -suggest-snapshot SNAP -suggest-data DATA [-suggest-url http://127.0.0.1:8080]
var (
	flagSuggestSnap    = flag.String("suggest-snapshot", "", "snapshot to draw the typo set from")
	flagSuggestData    = flag.String("suggest-data", "", "data directory with a generation of it")
	flagSuggestURL     = flag.String("suggest-url", "", "a gds serve to ask over HTTP instead")
	flagSuggestN       = flag.Int("suggest-n", 1000, "typos in the set")
	flagSuggestClients = flag.Int("suggest-clients", 16, "concurrent clients")
)

func TestSuggestTypos(t *testing.T) {
	if *flagSuggestSnap == "" || (*flagSuggestData == "" && *flagSuggestURL == "") {
		t.Skip("needs -suggest-snapshot and -suggest-data or -suggest-url")
	}
	set, err := typo.MisspellSnapshot(*flagSuggestSnap, *flagSuggestN, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	ask := inProcess(t)
	if *flagSuggestURL != "" {
		ask = overHTTP(*flagSuggestURL)
	}
	found := 0
	var lat []time.Duration
	for _, m := range set {
		t0 := time.Now()
		got, err := ask(m.Text)
		lat = append(lat, time.Since(t0))
		if err != nil {
			t.Fatal(err)
		}
		// The name, not the ID: many pilots share a name.
		if slices.Contains(got, nametable.Fold(m.Name)) {
			found++
		} else if testing.Verbose() && len(lat)-found <= 40 {
			t.Logf("missed %q for %q: %q", m.Text, m.Name, got)
		}
	}
	t.Logf("recall@10 %d/%d = %.1f%%; one client: %s", found, len(set), 100*float64(found)/float64(len(set)), percentiles(lat))
	// Concurrent clients, each through the whole set once.
	var mu sync.Mutex
	var all []time.Duration
	var shed int
	var wg sync.WaitGroup
	start := time.Now()
	for c := range *flagSuggestClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := range set {
				m := set[(i+c*61)%len(set)]
				t0 := time.Now()
				if _, err := ask(m.Text); err != nil {
					mu.Lock()
					shed++ // a 503 of the concurrency gate, over HTTP
					mu.Unlock()
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	t.Logf("%d clients: %.0f suggestions/s; %s; %d refused (503)", *flagSuggestClients, float64(len(all))/el.Seconds(), percentiles(all), shed)
}

func percentiles(d []time.Duration) string {
	slices.Sort(d)
	at := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	return fmt.Sprintf("p50 %s p90 %s p99 %s max %s", at(0.5), at(0.9), at(0.99), d[len(d)-1])
}

func inProcess(t *testing.T) func(string) ([]string, error) {
	if *flagSuggestData == "" {
		return nil
	}
	m, err := indexer.Open(indexer.Options{DataDir: *flagSuggestData, Logger: zerolog.New(io.Discard), TablesInMemory: true, StoresInMemoryAuto: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	s := query.New(m)
	return func(text string) ([]string, error) {
		v, err := s.View()
		if err != nil {
			return nil, err
		}
		defer v.Close()
		res, err := v.Suggest(context.Background(), query.SuggestRequest{Text: text,
			Categories: []snapshots.Category{snapshots.CategoryCharacter}, Limit: 10})
		var names []string
		for _, s := range res.Suggestions {
			names = append(names, nametable.Fold(s.Name))
		}
		return names, err
	}
}

func overHTTP(base string) func(string) ([]string, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return func(text string) ([]string, error) {
		resp, err := client.Get(base + "/latest/suggest/?categories=character&limit=10&search=" + url.QueryEscape(text))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out []query.Suggestion
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return nil, fmt.Errorf("%q: %d %w", text, resp.StatusCode, err)
		}
		names := make([]string, len(out))
		for i, s := range out {
			names[i] = nametable.Fold(s.Name)
		}
		return names, nil
	}
}
