package httplog

import (
	"bytes"
	"net"
	"net/http"
	"strconv"

	"gds/api/esierr"
)

// RejectFunc is told of an answer net/http gave by itself (remote is the
// peer's address) and may change its status and add headers (the error
// limit's).
type RejectFunc func(remote string, status int) (int, http.Header)

// JSONErrors wraps ln so that the answers net/http writes on its own,
// before any handler runs (431 for a header block over the server's
// MaxHeaderBytes, 400 for a malformed request, 501 for an unknown
// transfer encoding), are {"error": ..., "status": ...} like every other answer.
// reject, when set, is told of each.
func JSONErrors(ln net.Listener, reject RejectFunc) net.Listener {
	return &jsonErrListener{Listener: ln, reject: reject}
}

type jsonErrListener struct {
	net.Listener
	reject RejectFunc
}

func (l *jsonErrListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrConn{Conn: c, reject: l.reject}, nil
}

type jsonErrConn struct {
	net.Conn
	reject RejectFunc
}

// plainErrorHeaders is how net/http's own error answers are written: one
// Write of the status line, these headers and a short text, with no Date
// header (answers of handlers always have one).
var plainErrorHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

func (c *jsonErrConn) Write(b []byte) (int, error) {
	if !bytes.HasPrefix(b, []byte("HTTP/1.1 ")) || len(b) < 13 {
		return c.Conn.Write(b)
	}
	head, text, ok := bytes.Cut(b, plainErrorHeaders)
	if !ok || bytes.IndexByte(head, '\n') >= 0 {
		return c.Conn.Write(b)
	}
	status, err := strconv.Atoi(string(b[9:12]))
	if err != nil || status < 400 {
		return c.Conn.Write(b)
	}
	msg := string(text)
	if status == http.StatusRequestHeaderFieldsTooLarge {
		msg = "request line and headers are too large"
	}
	h := http.Header{}
	if c.reject != nil {
		var extra http.Header
		if status, extra = c.reject(c.RemoteAddr().String(), status); extra != nil {
			h = extra
			if status == 420 {
				msg = "error limited: this client got too many error answers; retry later"
			}
		}
	}
	body := esierr.JSON(status, msg)
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Connection", "close")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	var out bytes.Buffer
	out.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + statusText(status) + "\r\n")
	h.Write(&out)
	out.WriteString("\r\n")
	out.Write(body)
	if _, err := c.Conn.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

func statusText(status int) string {
	if status == 420 {
		return "Error Limited" // as the API writes it (see errorlimit.go)
	}
	return http.StatusText(status)
}
