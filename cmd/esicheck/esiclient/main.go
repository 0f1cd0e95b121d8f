// Command esiclient calls a live gds through the Go client that
// oapi-codegen generates from ESI's OpenAPI document of a compatibility
// date (package esi, written by `make esi-check` into esi/, never
// committed), as a 2026 ESI client does: unversioned paths without a
// trailing slash, X-Compatibility-Date on every request, answers and
// errors decoded into the generated types.
//
// It lists the document's operations and the routes gds serves (its
// /meta/status, read through the generated client: the route table as
// served), reads the calls to make from standard input (a JSON array that
// cmd/esicheck writes: concrete paths, queries, bodies, tokens and the
// expected status), and prints one JSON line per call or skipped
// operation with what it found. cmd/esicheck applies the known
// exceptions and counts; this program only reports.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"gds/cmd/esicheck/esiclient/esi"
)

// planned is one call cmd/esicheck asks for.
type planned struct {
	ID       int    `json:"id"`
	Method   string `json:"method"`   // GET, POST
	Template string `json:"template"` // the document's path, e.g. /characters/{character_id}
	Path     string `json:"path"`     // concrete, without a trailing slash
	Query    string `json:"query"`
	Body     string `json:"body"`
	Token    string `json:"token"`
	Want     int    `json:"want"` // the status the answer must have
}

// result is one line of the output: a call made (ID ≥ 0) or an operation
// of the document not called (Skipped, or a finding with ID -1).
type result struct {
	ID        int      `json:"id"`
	Operation string   `json:"operation"`
	Method    string   `json:"method"`
	Template  string   `json:"template"`
	Status    int      `json:"status,omitempty"`
	Findings  []string `json:"findings,omitempty"`
	Skipped   string   `json:"skipped,omitempty"`
}

func main() {
	base := flag.String("base", "", "gds's address, e.g. http://127.0.0.1:8080")
	docPath := flag.String("openapi", "", "ESI's OpenAPI document the client was generated from")
	flag.Parse()
	if err := run(*base, *docPath); err != nil {
		fmt.Fprintln(os.Stderr, "esiclient:", err)
		os.Exit(2)
	}
}

func run(base, docPath string) error {
	doc, err := readDoc(docPath)
	if err != nil {
		return err
	}
	var plan []planned
	if err := json.NewDecoder(os.Stdin).Decode(&plan); err != nil {
		return fmt.Errorf("reading the calls: %w", err)
	}
	cl, err := esi.NewClientWithResponses(base, esi.WithHTTPClient(&http.Client{Timeout: time.Minute}))
	if err != nil {
		return err
	}
	ctx := context.Background()
	served, err := servedRoutes(ctx, cl, doc.date)
	if err != nil {
		return err
	}
	byOp := map[string][]planned{}
	for _, p := range plan {
		key := p.Method + " " + p.Template
		if _, ok := doc.ops[key]; !ok {
			emit(result{ID: p.ID, Method: p.Method, Template: p.Template,
				Findings: []string{"planned call to an operation the document does not have"}})
			continue
		}
		byOp[key] = append(byOp[key], p)
	}
	keys := make([]string, 0, len(doc.ops))
	for k := range doc.ops {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		method, tmpl, _ := strings.Cut(key, " ")
		op := doc.ops[key]
		r := result{ID: -1, Operation: op, Method: method, Template: tmpl}
		fn, known := operations[op]
		switch {
		case !served[key]:
			r.Skipped = "gds does not serve it"
			emit(r)
			continue
		case !known:
			r.Findings = []string{"gds serves it, but esiclient has no call for it"}
		case len(byOp[key]) == 0:
			r.Findings = []string{"gds serves it, but cmd/esicheck planned no call"}
		}
		if r.Findings != nil {
			emit(r)
			continue
		}
		for _, p := range byOp[key] {
			emit(call(ctx, cl, fn, op, doc.date, p))
		}
	}
	return nil
}

// document is what esiclient needs of ESI's document: its compatibility
// date and operation IDs by "METHOD /path".
type document struct {
	date string
	ops  map[string]string
}

func readDoc(path string) (*document, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := &document{date: d.Info.Version, ops: map[string]string{}}
	for p, item := range d.Paths {
		for method, rawOp := range item {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if json.Unmarshal(rawOp, &op) != nil || op.OperationID == "" {
				continue // parameters, summary, …
			}
			out.ops[strings.ToUpper(method)+" "+p] = op.OperationID
		}
	}
	return out, nil
}

// servedRoutes are the routes gds serves for date, as its /meta/status
// lists them ("GET /characters/{character_id}").
func servedRoutes(ctx context.Context, cl *esi.ClientWithResponses, date string) (map[string]bool, error) {
	resp, err := cl.GetMetaStatusWithResponse(ctx, &esi.GetMetaStatusParams{XCompatibilityDate: esi.GetMetaStatusParamsXCompatibilityDate(date)})
	if err != nil {
		return nil, fmt.Errorf("GetMetaStatus: %w", err)
	}
	if resp.JSON200 == nil {
		return nil, fmt.Errorf("GetMetaStatus: %s: %s", resp.Status(), resp.Body)
	}
	out := map[string]bool{}
	for _, r := range resp.JSON200.Routes {
		out[string(r.Method)+" "+r.Path] = true
	}
	return out, nil
}

func emit(r result) {
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}
