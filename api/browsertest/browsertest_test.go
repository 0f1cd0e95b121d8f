//go:build browser

package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The helper itself, in a real Chromium: a page's CSP violation and script
// error are reported, a clean page reports nothing, screenshots land on
// disk, and Serve brings up the real binary.

func TestBrowserHelperReportsProblems(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/clean", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		fmt.Fprint(w, `<!doctype html><title>clean</title><h1 id=h>clean page</h1>`)
	})
	mux.HandleFunc("/inline", func(w http.ResponseWriter, r *http.Request) {
		// An inline script under a policy that forbids it: Chromium
		// refuses it and logs the violation.
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		fmt.Fprint(w, `<!doctype html><title>inline</title><h1 id=h>inline</h1><script>document.title="ran"</script>`)
	})
	mux.HandleFunc("/throws", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>throws</title><h1 id=h>throws</h1><script>null.x</script>`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b := Start(t, Options{})
	tab := b.NewTab(t)
	tab.Do(t, "clean page", chromedp.Navigate(srv.URL+"/clean"))
	text := Get(t, tab, "heading", chromedp.Text(chromedp.CSS("#h")))
	if text != "clean page" {
		t.Errorf("heading %q", text)
	}
	tab.CheckClean(t)
	path := tab.Screenshot(t, "clean")
	if fi, err := os.Stat(path); err != nil || fi.Size() < 100 {
		t.Errorf("screenshot %s: %v", path, err)
	}

	tab.Do(t, "inline page", chromedp.Navigate(srv.URL+"/inline"), chromedp.WaitVisible(chromedp.CSS("#h")))
	title := Get(t, tab, "title", chromedp.Title())
	if title == "ran" {
		t.Error("the inline script ran despite the policy")
	}
	waitProblem(t, tab, "Content Security Policy")

	other := b.NewTab(t)
	other.Do(t, "throwing page", chromedp.Navigate(srv.URL+"/throws"), chromedp.WaitVisible(chromedp.CSS("#h")))
	waitProblem(t, other, "exception")
}

// waitProblem waits for a logged problem containing want: events arrive
// asynchronously after the page loads.
func waitProblem(t *testing.T, tab *Tab, want string) {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		seen = tab.Problems()
		for _, p := range seen {
			if strings.Contains(p, want) {
				return
			}
		}
	}
	t.Errorf("no problem mentioning %q logged; got %q", want, seen)
}

func TestBrowserServe(t *testing.T) {
	s := Serve(t, ServeOptions{})
	resp, err := http.Get(s.URL + "/latest/search/?search=jita&categories=solar_system")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: search answered %d", s, resp.StatusCode)
	}
}
