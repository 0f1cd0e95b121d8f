package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// clientCall is one call for cmd/esicheck/esiclient, the client generated
// from ESI's OpenAPI document: on the document's path (no trailing
// slash), with the status the answer must have.
type clientCall struct {
	ID       int    `json:"id"`
	Method   string `json:"method"`
	Template string `json:"template"`
	Path     string `json:"path"`
	Query    string `json:"query,omitempty"`
	Body     string `json:"body,omitempty"`
	Token    string `json:"token,omitempty"`
	Want     int    `json:"want"`
}

// clientResult is one line esiclient prints.
type clientResult struct {
	ID        int      `json:"id"`
	Operation string   `json:"operation"`
	Method    string   `json:"method"`
	Template  string   `json:"template"`
	Status    int      `json:"status"`
	Findings  []string `json:"findings"`
	Skipped   string   `json:"skipped"`
}

// errorCalls are calls whose answer is an error that the generated client
// decodes into its Error type: a 404 of a lookup, 400s of a body and of
// a query parameter.
func errorCalls(s *sample) []call {
	return []call{
		{method: "get", template: "/characters/{character_id}/", path: "/characters/2112000000/", note: "404"},
		{method: "get", template: "/universe/types/{type_id}/", path: "/universe/types/999999999/", note: "404"},
		{method: "post", template: "/universe/ids/", body: `["Jita", "Jita"]`, note: "400 duplicate"},
		{method: "post", template: "/characters/affiliation/", body: `[]`, note: "400 empty"},
		{method: "get", template: "/characters/{character_id}/search/", path: fmt.Sprintf("/characters/%d/search/", s.character),
			query: "search=jita", character: s.character, scopes: []string{"esi-search.search_structures.v1"}, note: "400 no categories"},
	}
}

// runClient makes calls (and errorCalls) through esiclient at bin against
// base, prints what it found with the known exceptions applied, and
// returns how many calls failed.
func (c *checker) runClient(bin, docPath string, calls []call, s *sample) (int, error) {
	errs := errorCalls(s)
	all := append(append([]call(nil), calls...), errs...)
	var plan []clientCall
	for i, cl := range all {
		if cl.path == "" && cl.note != "" && i < len(calls) {
			continue // no value for a path parameter: esiclient reports the operation if gds serves it
		}
		if cl.path == "" {
			cl.path = cl.template
			all[i].path = cl.path
		}
		tok, err := c.token(cl)
		if err != nil {
			return 0, err
		}
		want := 200
		if i >= len(calls) {
			fmt.Sscan(cl.note, &want)
		}
		plan = append(plan, clientCall{ID: i, Method: strings.ToUpper(cl.method), Template: unslash(cl.template),
			Path: unslash(cl.path), Query: cl.query, Body: cl.body, Token: tok, Want: want})
	}
	in, err := json.Marshal(plan)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(bin, "-base", c.base, "-openapi", docPath)
	cmd.Stdin, cmd.Stderr = bytes.NewReader(in), os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", bin, err)
	}
	return c.clientReport(out, all)
}

// clientReport prints esiclient's lines and counts them.
func (c *checker) clientReport(out []byte, all []call) (int, error) {
	passed, failed, nExcepted, calledOps, exceptedBy := 0, 0, 0, map[string]bool{}, map[string]int{}
	var skipped []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r clientResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return 0, fmt.Errorf("esiclient printed %q: %w", sc.Text(), err)
		}
		name := r.Operation + " (" + r.Method + " " + r.Template + ")"
		if r.Skipped != "" {
			skipped = append(skipped, r.Operation)
			continue
		}
		var cl call
		if r.ID >= 0 && r.ID < len(all) {
			cl = all[r.ID]
			name += " " + unslash(cl.path)
			if cl.note != "" {
				name += " (" + cl.note + ")"
			}
			calledOps[r.Operation] = true
		}
		var real []string
		for _, f := range r.Findings {
			if why := excepted("", cl, f); why != "" {
				fmt.Printf("EXCEPTED %s %d: %s\n    because %s\n", name, r.Status, f, why)
				nExcepted++
				exceptedBy[why]++
				continue
			}
			real = append(real, f)
		}
		if len(real) == 0 {
			passed++
			if c.verbose {
				fmt.Printf("PASS %s %d\n", name, r.Status)
			}
			continue
		}
		failed++
		for _, f := range real {
			fmt.Printf("FAIL %s %d: %s\n", name, r.Status, f)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	fmt.Printf("\nnot served by gds, skipped (%d): %s\n", len(skipped), strings.Join(skipped, ", "))
	fmt.Printf("%d operations called through the generated client; %d findings excepted\n", len(calledOps), nExcepted)
	for why, n := range exceptedBy {
		fmt.Printf("%d excepted: %s\n", n, why)
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	return failed, nil
}

// unslash is an ESI 2018 path as ESI's OpenAPI document spells it: no
// trailing slash.
func unslash(p string) string {
	if len(p) > 1 {
		return strings.TrimSuffix(p, "/")
	}
	return p
}
