// Package web is the search page for people at / on the public port: one
// server-rendered HTML page (html/template) that works without script, and
// a small script that turns it into search-as-you-type over the public API.
// Its assets are embedded in the binary, served with ETags, and the page
// runs under a Content-Security-Policy that allows nothing from elsewhere
// and no inline script or style.
package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/esierr"
	"gds/query"
)

// Views pins the live generation for one page (query.Searcher implements
// it, as the API's Views does).
type Views interface {
	View() (*query.View, error)
}

// Deps are what the page needs.
type Deps struct {
	// Views gives the server-side render the live generation, searched
	// in-process with the API's ranking.
	Views Views
	// Logger receives render failures.
	Logger zerolog.Logger
	// SearchLimit, when set, is asked before the page searches for a
	// request (only a URL with search text does): a server-rendered search
	// must spend the same budget as a call to the search route, or the page
	// would be a way around it. false answers the page with 429 and the
	// wait, in words and in Retry-After.
	SearchLimit func(c *gin.Context) (wait time.Duration, ok bool)
	// SearchSlot, when set, is asked for one of the API's search slots
	// before the page searches and released after: the page's searches
	// queue with the API's instead of running beside them. An error
	// answers the page with 503 and Retry-After: 1.
	SearchSlot func(ctx context.Context) (release func(), err error)
}

// CSP is the page's Content-Security-Policy: script, style, images and
// fetches from this origin only, no inline script or style, no framing,
// forms submit here only.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// AssetPrefix is where the embedded assets are served.
const AssetPrefix = "/assets/"

//go:embed assets
var assetFS embed.FS

// asset is one embedded file with its validator.
type asset struct {
	body        []byte
	etag        string
	contentType string
}

// Handler serves the page and its assets.
type Handler struct {
	d      Deps
	assets map[string]asset
	// version is a hash of every asset: the page links assets with it so a
	// browser never mixes the script of one build with the page of another.
	version string
	page    *template.Template
	local   *template.Template // local.go
}

// New loads the embedded assets and the page template.
func New(d Deps) *Handler {
	h := &Handler{d: d, assets: map[string]asset{}}
	all := sha256.New()
	err := fs.WalkDir(assetFS, "assets", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		body, err := assetFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		name := strings.TrimPrefix(p, "assets/")
		all.Write([]byte(name))
		all.Write(sum[:])
		h.assets[name] = asset{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`,
			contentType: contentType(name)}
		return nil
	})
	if err != nil {
		panic("web: embedded assets: " + err.Error()) // the build embeds them; cannot fail at run time
	}
	h.version = hex.EncodeToString(all.Sum(nil)[:6])
	funcs := template.FuncMap{
		"asset": func(name string) string { return AssetPrefix + name + "?v=" + h.version },
	}
	h.page = template.Must(template.New("page.html").Funcs(funcs).Parse(string(h.assets["page.html"].body)))
	h.local = template.Must(template.New("local.html").Funcs(funcs).Parse(string(h.assets["local.html"].body)))
	// Templates, not something to download.
	delete(h.assets, "page.html")
	delete(h.assets, "local.html")
	return h
}

func contentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Register adds the page (/), the local breakdown (/local, also POST) and
// its assets (/assets/...) to e, for GET and HEAD. Nothing else of the API
// lives under these paths.
func Register(e *gin.Engine, d Deps) *Handler {
	h := New(d)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		e.Handle(m, "/", h.servePage)
		e.Handle(m, AssetPrefix+"*name", h.serveAsset)
		e.Handle(m, "/local", h.serveLocal)
	}
	e.Handle(http.MethodPost, "/local", h.serveLocal)
	return h
}

// Paths are the paths the page serves besides / and the assets; the
// API's unversioned routes leave them to it.
var Paths = []string{"/local"}

// Size is the total size of the embedded assets in bytes (the page
// template included), for the docs and a test that keeps it small.
func Size() int {
	n := 0
	fs.WalkDir(assetFS, "assets", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if b, err := assetFS.ReadFile(p); err == nil {
				n += len(b)
			}
		}
		return nil
	})
	return n
}

// securityHeaders go on the page and every asset.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// serveAsset answers an embedded asset with its ETag (304 when the client
// has it). Linked with the current ?v= it may be kept for a year; without
// it, it is revalidated every time.
func (h *Handler) serveAsset(c *gin.Context) {
	a, ok := h.assets[strings.TrimPrefix(c.Param("name"), "/")]
	if !ok {
		c.AbortWithStatusJSON(http.StatusNotFound, esierr.New(http.StatusNotFound, "Not found"))
		return
	}
	hdr := c.Writer.Header()
	securityHeaders(hdr)
	hdr.Set("ETag", a.etag)
	if c.Query("v") == h.version {
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hdr.Set("Cache-Control", "no-cache")
	}
	if matches(c.Request.Header.Values("If-None-Match"), a.etag) {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, a.contentType, a.body)
}

// matches reports whether an If-None-Match header names etag.
func matches(headers []string, etag string) bool {
	for _, h := range headers {
		for tag := range strings.SplitSeq(h, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}

// servePage renders the page for the state in the URL; with a search in
// it, the results are in the HTML, so a shared link works without script.
func (h *Handler) servePage(c *gin.Context) {
	st := parseState(c.Request.URL.Query())
	data := h.render(c, st)
	data.Version = h.version
	// The page shows the live generation's answer: revalidate every time.
	h.html(c, h.page, data, data.status, data.retryAfter, "no-cache")
}

// html renders a page's template with its headers: the security ones,
// cacheControl and Retry-After (seconds; 0 for none).
func (h *Handler) html(c *gin.Context, t *template.Template, data any, status, retryAfter int, cacheControl string) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		h.d.Logger.Error().Err(err).Str("template", t.Name()).Msg("rendering the search page")
		c.AbortWithStatusJSON(http.StatusInternalServerError, esierr.New(http.StatusInternalServerError, "Internal error"))
		return
	}
	hdr := c.Writer.Header()
	securityHeaders(hdr)
	hdr.Set("Cache-Control", cacheControl)
	if retryAfter > 0 {
		hdr.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}
