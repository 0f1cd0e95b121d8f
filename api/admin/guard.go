package admin

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// guard refuses what a web page in the operator's browser could send to
// the operator port: a Host that is not this listener (DNS rebinding: a
// name the attacker controls pointing at 127.0.0.1), a cross-origin
// request, and a POST that is not application/json (which a page can only
// send after a CORS preflight this port never grants). hosts are the
// further names (name or name:port) the port may be reached by.
func guard(hosts []string) gin.HandlerFunc {
	allowed := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			allowed[h] = true
		}
	}
	return func(c *gin.Context) {
		r := c.Request
		if !hostAllowed(r, allowed) {
			writeError(c, http.StatusForbidden, "Host "+quoteHost(r.Host)+" is not this operator port's address; "+
				"reach it by its IP address or localhost, or name the host with --admin-hosts")
			return
		}
		if crossOrigin(r) {
			writeError(c, http.StatusForbidden, "Cross-origin requests to the operator port are refused")
			return
		}
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				writeError(c, http.StatusUnsupportedMediaType, "POST needs Content-Type: application/json")
				return
			}
		}
		c.Next()
	}
}

// hostAllowed reports whether the request's Host names this listener: its
// IP address (the socket's, when the server says), localhost on a
// loopback socket, or one of the allowed names.
func hostAllowed(r *http.Request, allowed map[string]bool) bool {
	host := strings.ToLower(r.Host)
	if allowed[host] {
		return true
	}
	name, _, err := net.SplitHostPort(host)
	if err != nil {
		name = host // no port
	}
	if allowed[name] {
		return true
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	var localIP net.IP
	if a, ok := local.(*net.TCPAddr); ok {
		localIP = a.IP
	}
	if name == "localhost" {
		return localIP == nil || localIP.IsLoopback()
	}
	ip := net.ParseIP(strings.Trim(name, "[]"))
	if ip == nil {
		return false
	}
	// An IP address cannot be rebound; the socket's own is the one that
	// reaches this listener.
	return localIP == nil || ip.Equal(localIP)
}

// crossOrigin reports whether a browser says the request comes from a page
// of another origin.
func crossOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || !strings.EqualFold(u.Host, r.Host)
}

// quoteHost keeps a hostile Host header short and printable in an answer.
func quoteHost(h string) string {
	if len(h) > 64 {
		h = h[:64] + "…"
	}
	return strings.ToValidUTF8(`"`+strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, h)+`"`, "?")
}
