// Package browsertest runs pages of gds in a real headless Chromium for
// tests built with the "browser" tag (make test-browser): it starts the
// gds binary on the sample snapshot, starts Chromium with a fresh profile,
// collects what the page logs (script errors, CSP violations) and writes
// screenshots where a person can look at them.
//
// The package itself builds without Chromium, so `make test` compiles and
// vets it; only the tagged tests that call it need the browser.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// DefaultChromium is where Debian's chromium package (make browser-deps)
// puts the browser; GDS_CHROMIUM overrides it.
const DefaultChromium = "/usr/bin/chromium"

// Flags are the command-line flags every browser starts with. Without the
// background-networking ones Chromium keeps calling home, and on a closed
// network those connections are refused and slow it down.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	// /dev/shm is tiny in many containers; Chromium crashes when it fills.
	"--disable-dev-shm-usage",
	"--hide-scrollbars", "--mute-audio", "--no-default-browser-check",
	"--disable-default-apps", "--disable-extensions", "--disable-breakpad",
	"--password-store=basic", "--use-mock-keychain", "--force-color-profile=srgb",
}

// Chromium returns the browser binary, failing the test with how to get it
// when it is missing: a browser test that skips silently proves nothing.
func Chromium(t testing.TB) string {
	t.Helper()
	path := DefaultChromium
	if p := os.Getenv("GDS_CHROMIUM"); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no Chromium at %s (%v): run `make browser-deps`, or set GDS_CHROMIUM", path, err)
	}
	return path
}

// Options change how a browser starts.
type Options struct {
	// Width and Height of the window in CSS pixels; 1280×900 when zero.
	Width, Height int
	// Flags are added to Flags.
	Flags []string
	// Timeout bounds everything done in the browser; 5 minutes when zero,
	// generous because test machines are busy.
	Timeout time.Duration
}

// Browser is one running Chromium with its own profile directory.
type Browser struct {
	ctx context.Context
}

// Start starts Chromium with Flags and a fresh --user-data-dir under
// t.TempDir; the browser is closed when the test ends.
func Start(t testing.TB, o Options) *Browser {
	t.Helper()
	if o.Width == 0 {
		o.Width, o.Height = 1280, 900
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(o.Width, o.Height),
	}
	for _, f := range append(append([]string(nil), Flags...), o.Flags...) {
		opts = append(opts, flagOption(f))
	}
	ctx, cancelTimeout := context.WithTimeout(context.Background(), o.Timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	// The first action starts the browser process and opens its first tab.
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return &Browser{ctx: browserCtx}
}

// flagOption turns "--name" or "--name=value" into an allocator option.
func flagOption(f string) chromedp.ExecAllocatorOption {
	name, value, hasValue := strings.Cut(strings.TrimPrefix(f, "--"), "=")
	if hasValue {
		return chromedp.Flag(name, value)
	}
	return chromedp.Flag(name, true)
}

// Tab is one browser tab and what its pages logged.
type Tab struct {
	// Ctx runs chromedp actions in the tab.
	Ctx context.Context
	mu  sync.Mutex
	log []string
}

// NewTab opens a tab that records script exceptions, console errors and
// warnings and browser log entries (a CSP violation is one); it closes with
// the test.
func (b *Browser) NewTab(t testing.TB) *Tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	tab := &Tab{Ctx: ctx}
	messages := chromedp.Console(ctx) // opens the tab and subscribes now
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				tab.add(m.String() + at(m.URL))
			}
		}
	}()
	return tab
}

func at(url string) string {
	if url == "" {
		return ""
	}
	return " (" + url + ")"
}

func (tab *Tab) add(s string) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	tab.log = append(tab.log, s)
}

// Problems returns what the tab's pages logged as errors or warnings so far.
func (tab *Tab) Problems() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]string(nil), tab.log...)
}

// CheckClean fails the test for every problem logged except those matching
// one of the allowed regular expressions (e.g. a 404 the test provoked).
func (tab *Tab) CheckClean(t testing.TB, allowed ...string) {
	t.Helper()
next:
	for _, p := range tab.Problems() {
		for _, a := range allowed {
			if regexp.MustCompile(a).MatchString(p) {
				continue next
			}
		}
		t.Errorf("the page logged: %s", p)
	}
}

// StepTimeout bounds one Do or Get: an action waiting for an element that
// never comes fails the test instead of running into the browser's timeout.
var StepTimeout = time.Minute

// Do runs actions in the tab, failing the test with what the page logged
// when one fails.
func (tab *Tab) Do(t testing.TB, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, StepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v\npage log: %q", what, err, tab.Problems())
	}
}

// Get runs one action that returns a value, failing the test as Do does.
func Get[T any](t testing.TB, tab *Tab, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v\npage log: %q", what, err, tab.Problems())
	}
	return v
}

// Eval evaluates a JavaScript expression in the page and decodes its value.
func Eval[T any](t testing.TB, tab *Tab, expr string) T {
	t.Helper()
	return Get(t, tab, "evaluate "+expr, chromedp.Evaluate[T](expr))
}

// WaitFor polls a JavaScript expression until it is truthy, failing the test
// after timeout (the page's problems are in the message).
func (tab *Tab) WaitFor(t testing.TB, what, expr string, timeout time.Duration) {
	t.Helper()
	_, err := chromedp.Run(tab.Ctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		t.Fatalf("waiting for %s (%s): %v\npage log: %q", what, expr, err, tab.Problems())
	}
}

// OutDir is where screenshots go: $GDS_BROWSER_OUT, or testdata/out (git-
// ignored) beside the test, in a folder per test. Screenshot logs each
// path, so a person knows where to look.
func OutDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv("GDS_BROWSER_OUT")
	if base == "" {
		base = filepath.Join("testdata", "out")
	}
	dir, err := filepath.Abs(filepath.Join(base, safeName(t.Name())))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatalf("screenshot folder: %v", err)
	}
	return dir
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// Screenshot writes a PNG of the whole page to OutDir(t)/name.png and
// returns its path.
func (tab *Tab) Screenshot(t testing.TB, name string) string {
	t.Helper()
	png := Get(t, tab, "screenshot "+name, chromedp.FullScreenshot(100))
	path := filepath.Join(OutDir(t), safeName(name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Viewport sets the tab's layout width and height in CSS pixels (e.g. 390
// for a phone, 1280 for a desktop).
func (tab *Tab) Viewport(t testing.TB, width, height int64) {
	t.Helper()
	tab.Do(t, "viewport", chromedp.EmulateViewport(width, height))
}

// ColorScheme makes the page see prefers-color-scheme as "light" or
// "dark" ("" removes the override).
func (tab *Tab) ColorScheme(t testing.TB, scheme string) {
	t.Helper()
	p := emulation.SetEmulatedMediaParams{}
	if scheme != "" {
		p.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
	}
	if _, err := chromedp.Call(tab.Ctx, emulation.SetEmulatedMedia, p); err != nil {
		t.Fatalf("color scheme %q: %v", scheme, err)
	}
}

// DisableScript turns JavaScript off in the tab for the pages it loads
// next, to check what a page shows without it.
func (tab *Tab) DisableScript(t testing.TB) {
	t.Helper()
	if _, err := chromedp.Call(tab.Ctx, emulation.SetScriptExecutionDisabled,
		emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disabling script: %v", err)
	}
}

// InsertText types text into the focused element as an input method would
// (any script, e.g. トリタニウム), firing the input events a person's typing
// fires.
func (tab *Tab) InsertText(t testing.TB, text string) {
	t.Helper()
	if _, err := chromedp.Call(tab.Ctx, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
		t.Fatalf("inserting %q: %v", text, err)
	}
}

// Key presses one key (a kb constant such as kb.ArrowDown, or a character)
// on the focused element.
func (tab *Tab) Key(t testing.TB, key string) {
	t.Helper()
	tab.Do(t, "key "+key, chromedp.KeyEvent(key))
}
