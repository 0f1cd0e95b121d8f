//go:build soak

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// soakReport writes the windows as JSON and as a picture (SVG): resident
// memory of both servers, and p50 and p99 of the public requests, per
// window, with the errors counted beneath.
func soakReport(t *testing.T, cfg soakConfig, windows []soakWindow) {
	t.Helper()
	if len(windows) == 0 {
		return
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(windows, "", "  ")
	if err := os.WriteFile(filepath.Join(cfg.out, "soak.json"), append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	svg := soakSVG(cfg, windows)
	if err := os.WriteFile(filepath.Join(cfg.out, "soak.svg"), []byte(svg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("windows written to %s/soak.json and soak.svg", cfg.out)
}

// soakSVG draws two panels over the windows: memory (MiB) and latency (ms).
func soakSVG(cfg soakConfig, ws []soakWindow) string {
	const width, panel, left, top = 760, 170, 70, 40
	var b strings.Builder
	height := top + 2*(panel+50) + 60
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	var total, fivexx, lost int
	for _, w := range ws {
		total += w.Requests
		fivexx += w.Public5xx
		lost += w.Lost
	}
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">gds soak: %v, %d windows of %v, %d public requests, %d 5xx, %d lost</text>`+"\n",
		left, cfg.duration, len(ws), cfg.window, total, fivexx, lost)
	x := func(i int) float64 {
		if len(ws) == 1 {
			return left + float64(width-left-20)/2
		}
		return left + float64(i)*float64(width-left-20)/float64(len(ws)-1)
	}
	type series struct {
		name, color string
		v           func(soakWindow) float64
	}
	draw := func(y0 int, title, unit string, ss []series) {
		hi := 0.0
		for _, s := range ss {
			for _, w := range ws {
				hi = max(hi, s.v(w))
			}
		}
		hi = max(hi*1.1, 1e-9)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y0-8, title)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", left, y0+panel, width-20, y0+panel)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", left, y0, left, y0+panel)
		for _, f := range []float64{0, 0.5, 1} {
			y := float64(y0+panel) - f*panel
			fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">%.1f %s</text>`+"\n", left-4, y+4, f*hi, unit)
		}
		for i, w := range ws {
			fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">%d</text>`+"\n", x(i), y0+panel+14, w.N)
		}
		for k, s := range ss {
			pts := make([]string, len(ws))
			for i, w := range ws {
				pts[i] = fmt.Sprintf("%.1f,%.1f", x(i), float64(y0+panel)-s.v(w)/hi*panel)
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", left+10+k*170, y0+panel+30, s.color, s.name)
		}
	}
	draw(top+20, "Resident memory per window (median of 10-s samples)", "MiB", []series{
		{"primary", "#1f77b4", func(w soakWindow) float64 { return w.RSSMiB }},
		{"primary, max", "#aec7e8", func(w soakWindow) float64 { return w.RSSMaxMiB }},
		{"replica", "#2ca02c", func(w soakWindow) float64 { return w.ReplicaRSSMiB }},
	})
	draw(top+20+panel+60, "Public requests per window", "ms", []series{
		{"p50", "#ff7f0e", func(w soakWindow) float64 { return w.P50 }},
		{"p99", "#d62728", func(w soakWindow) float64 { return w.P99 }},
	})
	fmt.Fprintf(&b, `<text x="%d" y="%d">x: window number (each %v)</text>`+"\n", left, height-12, cfg.window)
	b.WriteString("</svg>\n")
	return b.String()
}
