package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"gds/query"
)

// POST /local/: a pasted local channel, broken down by alliance and
// corporation (docs/api.md, Local). gds's own route, not ESI's.

// localRoutes is the route of locals.
func (s *server) localRoutes() []Route {
	return []Route{{
		Method:    http.MethodPost,
		Path:      "/local/",
		Summary:   "Resolve a pasted list of character names (a local channel's members) and count them by corporation and alliance.",
		Tags:      []string{TagGDS},
		RateLimit: RateGroupSearch,
		Doc: Doc{
			Params: []Param{datasourceParamDoc, {
				Name: "names", In: "body", Required: true,
				Description: fmt.Sprintf("1 to %d character names of at most %d characters, matched exactly and ignoring case: "+
					"text/plain, one name a line as the game's chat member list copies (blank lines and surrounding spaces ignored), "+
					"or a JSON array of strings", query.MaxLocalNames, maxNameLength),
				Schema: schemaArray(map[string]any{"type": "string", "maxLength": maxNameLength}, 1, query.MaxLocalNames),
			}},
			Consumes: []string{"text/plain", "application/json"},
			Response: schemaOf(query.Local{}),
		},
		Versions: []Version{{N: 1, Handler: s.local, Lifecycle: s.lifecycles().Current}},
	}}
}

// TagGDS tags the routes that are gds's own, not ESI's.
const TagGDS = "gds"

// local answers POST /local/.
func (s *server) local(c *gin.Context) {
	if !parseDatasource(c) {
		return
	}
	names, err := ParseLocal(c.ContentType(), c.Request.Body)
	if err != nil {
		writeBodyError(c, err)
		return
	}
	s.read(c, func(r Reader) {
		lr, ok := r.(localReader)
		if !ok {
			s.internalError(c, errors.New("local: the reader cannot resolve a local"))
			return
		}
		if !s.gate.enter(c) {
			return
		}
		l, err := lr.Local(names)
		s.gate.leave()
		if err != nil {
			s.internalError(c, err)
			return
		}
		// Encoded after the slot is released: the slot bounds the work
		// on the index; the answer needs only l.
		body := localBodies.Get().(*[]byte)
		*body = appendLocal((*body)[:0], l)
		c.Header("Cache-Control", cacheControlNoCache[0])
		sendJSON(c, *body)
		if cap(*body) <= maxPooledLocal {
			localBodies.Put(body)
		}
	})
}

// localReader is a Reader that resolves locals (query.View does).
type localReader interface {
	Local(names []string) (query.Local, error)
}

var _ localReader = (*query.View)(nil)

// ParseLocal reads the body of a local: a JSON array of names when
// contentType is JSON (or, with no text type named, when the body is an
// array), else text, one name a line. Names are trimmed; blank ones are
// skipped. The search page reads its form's text with it too.
func ParseLocal(contentType string, body io.Reader) ([]string, error) {
	if body == nil {
		return nil, errors.New("request body: missing; send names, one a line, or a JSON array of names")
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	buf := localReads.Get().(*[]byte)
	data, err := readInto((*buf)[:0], io.LimitReader(body, maxBodyBytes+1))
	*buf = data[:0]
	defer func() {
		if cap(*buf) <= maxPooledLocal {
			localReads.Put(buf)
		}
	}()
	if err != nil {
		return nil, readBodyError(err)
	}
	if len(data) > maxBodyBytes {
		return nil, &bodyError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", maxBodyBytes)}
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return localJSON(data)
	case mt == "" || mt == "text/plain" || mt == "application/x-www-form-urlencoded":
		// curl -d sends the form type; a body that is an array is JSON.
		if mt != "text/plain" && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
			return localJSON(data)
		}
		return localText(data)
	}
	return nil, &bodyError{status: http.StatusUnsupportedMediaType,
		msg: fmt.Sprintf("Content-Type: %s is not text/plain (one name a line) or application/json (an array of names)", mt), location: "header.Content-Type", value: mt}
}

// localReads are the buffers local bodies are read into: what a body's
// parsing keeps it copies (the text's lines, JSON's strings), so that the
// buffer serves the next body.
var localReads = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// readInto appends what r reads to buf until io.EOF, as io.ReadAll does
// from an empty buffer.
func readInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// localText splits a text body into its names (query.LocalLines).
func localText(data []byte) ([]string, error) {
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalid(data)], []byte("\n"))
		return nil, fmt.Errorf("request body line %d: not valid UTF-8 text", line)
	}
	names, err := query.LocalLines(string(data))
	var le *query.LineError
	switch {
	case errors.As(err, &le):
		return nil, fmt.Errorf("request body %w", err)
	case err != nil:
		return nil, fmt.Errorf("request body: %w", err)
	}
	return names, nil
}

// localJSON reads a JSON array of names.
func localJSON(data []byte) ([]string, error) {
	items, err := decodeBodyArray(bytes.NewReader(data), query.MaxLocalNames)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(items))
	for i, raw := range items {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, fmt.Errorf("request body[%d]: must be a string, got %.40s", i, raw)
		}
		// encoding/json turns invalid UTF-8 and lone surrogates into
		// U+FFFD silently: a name with one was garbled on the way.
		if !utf8.Valid(raw) || strings.ContainsRune(name, utf8.RuneError) {
			return nil, fmt.Errorf("request body[%d]: must be valid UTF-8 text", i)
		}
		name = strings.TrimSpace(name)
		if n := utf8.RuneCountInString(name); n > query.MaxLocalNameRunes {
			return nil, fmt.Errorf("request body[%d]: a name of %d characters, at most %d", i, n, query.MaxLocalNameRunes)
		}
		if name != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("request body: no names, only blank strings")
	}
	return names, nil
}

// firstInvalid is the offset of the first byte of data that is not valid
// UTF-8.
func firstInvalid(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}
