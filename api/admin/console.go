package admin

import (
	"embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// The analysts' console: one page, its script and its style, built into
// the binary. They hold no data, so they are served without the admin
// token; the page asks for the token when the server wants one, keeps it
// in the tab's sessionStorage and sends it as Authorization: Bearer on
// every call of /admin/fields and /admin/query, which are guarded.
//
//go:embed console/index.html console/console.js console/console.css console/favicon.svg
var consoleFiles embed.FS

// consoleCSP allows the page only its own script, style and API calls:
// no inline script or style, no framing, no form posts elsewhere.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *handler) console(e *gin.Engine) {
	asset := func(name, contentType string) gin.HandlerFunc {
		body, err := consoleFiles.ReadFile("console/" + name)
		if err != nil {
			panic(err) // embedded at build time
		}
		return func(c *gin.Context) {
			c.Header("Content-Security-Policy", consoleCSP)
			c.Header("X-Content-Type-Options", "nosniff")
			c.Header("X-Frame-Options", "DENY")
			c.Header("Referrer-Policy", "no-referrer")
			c.Header("Cache-Control", "no-cache")
			c.Data(http.StatusOK, contentType, body)
		}
	}
	e.GET("/admin", func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, "/admin/") })
	e.GET("/admin/", asset("index.html", "text/html; charset=utf-8"))
	e.GET("/admin/console.js", asset("console.js", "text/javascript; charset=utf-8"))
	e.GET("/admin/console.css", asset("console.css", "text/css; charset=utf-8"))
	e.GET("/admin/favicon.svg", asset("favicon.svg", "image/svg+xml"))
}
