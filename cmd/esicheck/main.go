// Command esicheck validates gds against ESI's published Swagger document:
// it starts the real gds binary on a snapshot with players, calls every
// route that the document also has (under every version label gds
// serves, with tokens minted by gds token where the route needs one),
// validates each request and answer with kin-openapi, and prints every
// violation and "N passed, M failed". Known exceptions (differences the
// interface gds implements requires; see docs/api.md, "ESI conformance")
// are reported but not counted as failures. `make esi-check` runs it; it
// is a developer tool, not part of `make test`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/gds", "the gds binary to check")
	flag.StringVar(&o.snapshot, "snapshot", "snapshots/sample", "snapshot with players to serve")
	flag.StringVar(&o.swagger, "swagger", "../shared/esi/esi-swagger-2021-06.json", "ESI's Swagger 2.0 document")
	flag.StringVar(&o.openapi, "openapi", "../shared/esi/esi-openapi-2026-08-18.json",
		"ESI's OpenAPI 3 document of a compatibility date, checked on unprefixed paths with that date (\"\": none)")
	flag.StringVar(&o.client, "client", "",
		"esiclient, built with the client generated from -openapi: it calls every operation of the document gds serves (\"\": none)")
	flag.BoolVar(&o.verbose, "v", false, "print every call, not only violations")
	flag.Parse()
	failed, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "esicheck:", err)
		os.Exit(2)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

type options struct {
	bin, snapshot, swagger, openapi string
	client                          string
	verbose                         bool
}

func run(o options) (int, error) {
	doc, err := loadESI(o.swagger)
	if err != nil {
		return 0, err
	}
	sample, err := readSample(o.snapshot)
	if err != nil {
		return 0, err
	}
	data, err := os.MkdirTemp("", "esicheck-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(data)
	base, stop, err := startServer(o.bin, o.snapshot, data)
	if err != nil {
		return 0, err
	}
	defer stop()
	c := &checker{doc: doc, base: base, bin: o.bin, data: data, verbose: o.verbose, tokens: map[string]string{}, labels: labels}
	for _, call := range plan(doc, sample) {
		c.check(call)
	}
	fmt.Printf("\n== %s, under every version label\n", o.swagger)
	c.report()
	failed := c.failed
	if o.openapi != "" {
		doc26, date, err := loadESIDated(o.openapi)
		if err != nil {
			return failed, err
		}
		c26 := &checker{doc: doc26, base: base, bin: o.bin, data: data, verbose: o.verbose, tokens: c.tokens,
			labels: []string{""}, date: date}
		calls := plan(doc26, sample)
		for _, call := range calls {
			c26.check(call)
		}
		fmt.Printf("\n== %s, unprefixed with %s: %s\n", o.openapi, "X-Compatibility-Date", date)
		c26.report()
		failed += c26.failed
		bad, err := checkOperationIDs(base, o.openapi, date)
		if err != nil {
			return failed, err
		}
		failed += bad
		if o.client != "" {
			fmt.Printf("\n== %s through the client oapi-codegen generated from it (%s)\n", o.openapi, o.client)
			bad, err := c26.runClient(o.client, o.openapi, calls, sample)
			if err != nil {
				return failed, err
			}
			failed += bad
		}
	}
	return failed, nil
}

// startServer runs gds serve on free loopback ports and waits until it
// answers; stop ends it.
func startServer(bin, snapshot, data string) (string, func(), error) {
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	abs, err := filepath.Abs(snapshot)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "serve", "--snapshot", abs, "--data", data, "--addr", addr,
		"--admin-addr", admin, "--error-limit", "-1", "--rate-limit", "off", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		resp, err := http.Get(base + "/latest/universe/types/34/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop, nil
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return "", nil, fmt.Errorf("gds did not answer on %s within 5 minutes", addr)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// mint returns a token of gds token for character with scopes, once.
func (c *checker) mint(character int64, scopes []string) (string, error) {
	key := fmt.Sprint(character, scopes)
	if t, ok := c.tokens[key]; ok {
		return t, nil
	}
	out, err := exec.Command(c.bin, "token", "--data", c.data, "--character", fmt.Sprint(character),
		"--scopes", strings.Join(scopes, ","), "--ttl", "1h").Output()
	if err != nil {
		return "", fmt.Errorf("gds token: %w", err)
	}
	t := strings.TrimSpace(string(out))
	c.tokens[key] = t
	return t, nil
}

// checkOperationIDs compares the operation IDs of gds's /meta/openapi.json
// on date with those of ESI's document for every operation both have, and
// returns how many differ.
func checkOperationIDs(base, esiPath, date string) (int, error) {
	type doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	var esi, gds doc
	raw, err := os.ReadFile(esiPath)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(raw, &esi); err != nil {
		return 0, fmt.Errorf("%s: %w", esiPath, err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/meta/openapi.json", nil)
	req.Header.Set("X-Compatibility-Date", date)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&gds); err != nil {
		return 0, fmt.Errorf("gds /meta/openapi.json: %w", err)
	}
	same, bad := 0, 0
	for path, ops := range gds.Paths {
		for method, op := range ops {
			want, ok := esi.Paths[path][method]
			switch {
			case !ok:
				continue
			case want.OperationID != op.OperationID:
				fmt.Printf("FAIL operation ID of %s %s: gds %q, ESI %q\n", strings.ToUpper(method), path, op.OperationID, want.OperationID)
				bad++
			default:
				same++
			}
		}
	}
	fmt.Printf("operation IDs of /meta/openapi.json: %d as ESI's, %d differ\n", same, bad)
	return bad, nil
}
