package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// loadESI reads ESI's Swagger 2.0 document as OpenAPI 3. Its array query
// parameters are comma-separated (Swagger's default collectionFormat, csv),
// which the conversion leaves as exploded form parameters: they are set to
// form, not exploded.
func loadESI(path string) (*openapi3.T, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc2 openapi2.T
	if err := json.Unmarshal(raw, &doc2); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("%s: to OpenAPI 3: %w", path, err)
	}
	no := false
	fix := func(params openapi3.Parameters) {
		for _, p := range params {
			v := p.Value
			if v != nil && v.In == openapi3.ParameterInQuery && v.Schema != nil && v.Schema.Value != nil &&
				v.Schema.Value.Type.Is("array") && v.Style == "" {
				v.Style, v.Explode = openapi3.SerializationForm, &no
			}
		}
	}
	for _, item := range doc.Paths.Map() {
		fix(item.Parameters)
		for _, op := range item.Operations() {
			fix(op.Parameters)
		}
	}
	return doc, nil
}

// loadESIDated reads ESI's OpenAPI 3 document of a compatibility date
// (its info.version): its paths have no trailing slash, as its clients
// call them, and gds serves them both ways; they are planned under the
// 2018 spelling the sample's calls know (/characters/{character_id}/),
// except the meta routes, which have no slash in either.
func loadESIDated(path string) (*openapi3.T, string, error) {
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	paths := openapi3.NewPaths()
	for tmpl, item := range doc.Paths.Map() {
		if !strings.HasPrefix(tmpl, "/meta/") {
			tmpl += "/"
		}
		paths.Set(tmpl, item)
	}
	doc.Paths = paths
	return doc, doc.Info.Version, nil
}

type checker struct {
	// labels are the prefixes calls are made under ("" for none), date
	// the X-Compatibility-Date they send when set.
	labels               []string
	date                 string
	doc                  *openapi3.T
	base, bin, data      string
	verbose              bool
	tokens               map[string]string
	passed, failed       int
	excepted, skipped    int
	notServed            int
	exceptedBy           map[string]int
	skippedNotes         []string
	routes, routesServed map[string]bool
}

// check makes call under every label and validates what gds serves.
func (c *checker) check(cl call) {
	if c.routes == nil {
		c.routes, c.routesServed, c.exceptedBy = map[string]bool{}, map[string]bool{}, map[string]int{}
	}
	key := cl.method + " " + cl.template
	c.routes[key] = true
	if cl.path == "" && cl.note != "" {
		if c.serves(cl) {
			c.skip(cl, cl.note)
		}
		return
	}
	if cl.path == "" {
		cl.path = cl.template
	}
	served := false
	for _, label := range c.labels {
		status, violations, err := c.call(cl, label)
		if err != nil {
			fmt.Printf("ERROR %s /%s%s: %v\n", cl.method, label, cl.path, err)
			c.failed++
			continue
		}
		if status < 0 {
			continue // gds does not serve this route under label
		}
		served = true
		name := fmt.Sprintf("%s %s", strings.ToUpper(cl.method), strings.TrimPrefix(c.target(label, cl.path), c.base))
		if cl.note != "" {
			name += " (" + cl.note + ")"
		}
		var real []string
		for _, v := range violations {
			if why := excepted(label, cl, v); why != "" {
				fmt.Printf("EXCEPTED %s %d: %s\n    because %s\n", name, status, v, why)
				c.excepted++
				c.exceptedBy[why]++
				continue
			}
			real = append(real, v)
		}
		if len(real) == 0 {
			c.passed++
			if c.verbose {
				fmt.Printf("PASS %s %d\n", name, status)
			}
			continue
		}
		c.failed++
		for _, v := range real {
			fmt.Printf("FAIL %s %d: %s\n", name, status, v)
		}
	}
	if served {
		c.routesServed[key] = true
	}
}

// serves reports whether gds has the route of cl at all, calling it with
// 1 for every path parameter (and no token) under every label.
func (c *checker) serves(cl call) bool {
	probe := cl
	probe.path, _ = fill(cl.template, onesFor(cl.template))
	probe.character, probe.scopes, probe.body = 0, nil, ""
	for _, label := range c.labels {
		req, err := http.NewRequest(strings.ToUpper(cl.method), c.target(label, probe.path), nil)
		if err != nil {
			return false
		}
		if c.date != "" {
			req.Header.Set("X-Compatibility-Date", c.date)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !notServed(b) {
			return true
		}
	}
	return false
}

// onesFor gives every path parameter of tmpl the value 1.
func onesFor(tmpl string) map[string]int64 {
	out := map[string]int64{}
	for _, seg := range strings.Split(tmpl, "/") {
		if strings.HasPrefix(seg, "{") {
			out[seg[1:len(seg)-1]] = 1
		}
	}
	return out
}

func (c *checker) skip(cl call, why string) {
	c.skipped++
	c.skippedNotes = append(c.skippedNotes, fmt.Sprintf("%s %s: %s", strings.ToUpper(cl.method), cl.template, why))
}

// call sends cl under label and validates request and answer against
// ESI's operation; status -1 means gds does not serve the route there.
func (c *checker) call(cl call, label string) (int, []string, error) {
	target := c.target(label, cl.path)
	if cl.query != "" {
		target += "?" + cl.query
	}
	var body io.Reader
	if cl.body != "" {
		body = strings.NewReader(cl.body)
	}
	req, err := http.NewRequest(strings.ToUpper(cl.method), target, body)
	if err != nil {
		return 0, nil, err
	}
	if cl.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.date != "" {
		req.Header.Set("X-Compatibility-Date", c.date)
	}
	tok, err := c.token(cl)
	if err != nil {
		return 0, nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) && notServed(got) ||
		resp.StatusCode == http.StatusBadRequest && otherRoute(cl.template, got) {
		return -1, nil, nil
	}
	violations := c.validate(cl, req, resp, got)
	if resp.StatusCode >= 300 {
		// An error the document declares still validates; every planned
		// call must succeed.
		violations = append(violations, fmt.Sprintf("status %d: %s", resp.StatusCode, clip(got)))
	}
	return resp.StatusCode, violations, nil
}

// token is the bearer token cl needs ("" for a public route): of its
// character, or of character 1 where only scopes are named.
func (c *checker) token(cl call) (string, error) {
	if cl.character <= 0 && len(cl.scopes) == 0 {
		return "", nil
	}
	character := cl.character
	if character == 0 {
		character = 1
	}
	return c.mint(character, cl.scopes)
}

// target is path under label ("": unprefixed).
func (c *checker) target(label, path string) string {
	if label == "" {
		return c.base + path
	}
	return c.base + "/" + label + path
}

// notServed reports whether a 404 body is gds's "no such route or version"
// rather than a route's own 404.
func notServed(body []byte) bool {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	return e.Error == "Not found" || e.Error == "Method not allowed" || strings.HasPrefix(e.Error, "This route") ||
		e.Error == "Unknown version"
}

// otherRoute reports whether a 400 body names a path parameter that tmpl
// does not have: another route of gds took the path (gds's
// /corporations/{corporation_id}/ answers ESI's /corporations/npccorps/
// with "corporation_id: must be a positive integer"), so gds does not
// serve tmpl.
func otherRoute(tmpl string, body []byte) bool {
	var e struct {
		Details []struct {
			Location string `json:"location"`
		} `json:"details"`
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	for _, d := range e.Details {
		if name, ok := strings.CutPrefix(d.Location, "path."); ok && !strings.Contains(tmpl, "{"+name+"}") {
			return true
		}
	}
	return false
}

// validate checks the request and the answer against ESI's operation.
func (c *checker) validate(cl call, req *http.Request, resp *http.Response, body []byte) []string {
	item := c.doc.Paths.Value(cl.template)
	op := item.GetOperation(strings.ToUpper(cl.method))
	params := map[string]string{}
	tp, pp := strings.Split(cl.template, "/"), strings.Split(cl.path, "/")
	for i := range tp {
		if strings.HasPrefix(tp[i], "{") && i < len(pp) {
			params[tp[i][1:len(tp[i])-1]] = pp[i]
		}
	}
	// Validate against the document's own path (its basePath is /latest).
	vreq := req.Clone(context.Background())
	vreq.URL = &url.URL{Path: cl.template, RawQuery: req.URL.RawQuery}
	if cl.body != "" {
		vreq.Body = io.NopCloser(strings.NewReader(cl.body))
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Options: opts,
		Route: &routers.Route{Spec: c.doc, Path: cl.template, PathItem: item, Method: strings.ToUpper(cl.method), Operation: op}}
	var out []string
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		out = append(out, "request: "+oneLine(err))
	}
	rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), rin); err != nil {
		out = append(out, "response: "+oneLine(err)+" — body "+clip(body))
	}
	return out
}

// oneLine is err on one line, without the schema dump kin-openapi adds.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if i := strings.Index(s, " Schema: "); i >= 0 {
		s = s[:i]
	}
	return s
}

func clip(b []byte) string {
	if len(b) > 240 {
		return string(b[:240]) + "…"
	}
	return string(b)
}

func (c *checker) report() {
	for _, n := range c.skippedNotes {
		fmt.Println("SKIPPED", n)
	}
	served := 0
	for k := range c.routes {
		if c.routesServed[k] {
			served++
		}
	}
	fmt.Printf("\n%d of ESI's %d operations answered by gds; %d calls skipped\n", served, len(c.routes), c.skipped)
	for why, n := range c.exceptedBy {
		fmt.Printf("%d excepted: %s\n", n, why)
	}
	fmt.Printf("%d passed, %d failed\n", c.passed, c.failed)
}
