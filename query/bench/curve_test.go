//go:build bench

package bench

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The cost curve: -sizes runs the whole bench once per size (this test
// binary re-executed with -names and a work directory of its own, every
// other flag given passed on), each run writing summary.json, and prints
// how every cost grows: each figure at each size and the exponent k of
// cost ∝ N^k between consecutive sizes (1 is linear).

var (
	flagSizes   = flag.String("sizes", "", "comma-separated name counts (e.g. 1000000,10000000,50000000): run the bench at each and print the cost curve")
	flagCurveOf = flag.String("curve-of", "", "comma-separated summary.json files of earlier runs, smallest first: print their cost curve and run nothing")
)

// summary is what one run reports for the cost curve.
type summary struct {
	Names         int64         `json:"names"`
	Rows          string        `json:"rows"` // the rows the run measured (-rows)
	BuildWall     time.Duration `json:"build_wall"`
	BuildCPU      time.Duration `json:"build_cpu"`
	BuildPeakAnon int64         `json:"build_peak_anon"`
	BuildPeakRSS  int64         `json:"build_peak_rss"`
	Disk          int64         `json:"disk"`
	ServingRSS    int64         `json:"serving_rss"`
	// CPU per answer of gds serve under wrk at 16 connections, cache off.
	ContainsCPU time.Duration `json:"contains_cpu"`
	StrictCPU   time.Duration `json:"strict_cpu"`
	// PostgreSQL's, for reference.
	PGBuildWall time.Duration `json:"pg_build_wall"`
	PGBuildCPU  time.Duration `json:"pg_build_cpu"`
	PGDisk      int64         `json:"pg_disk"`
	PGExtract   time.Duration `json:"pg_extract"`
}

// makeSummary collects a full run's figures.
func makeSummary(n int64, build buildOut, disk int64, gs searchOut, hr httpResult, load pgLoad) summary {
	s := summary{Names: n, Rows: chosen.String(), BuildWall: build.Duration, BuildCPU: build.CPU, BuildPeakAnon: build.PeakAnon,
		BuildPeakRSS: build.MaxRSS, Disk: disk, ServingRSS: max(gs.MaxRSS, hr.RSS),
		PGBuildWall: load.Build(), PGBuildCPU: load.BuildCPU(), PGDisk: load.Disk(), PGExtract: load.Extract}
	if r, ok := hr.row(scenContains, 16); ok {
		s.ContainsCPU = r.CPUPerReq
	}
	if r, ok := hr.row(scenStrict, 16); ok {
		s.StrictCPU = r.CPUPerReq
	}
	return s
}

// costCurve runs the bench at every size of -sizes and prints the curve.
func costCurve(t *testing.T) {
	var sizes []int64
	for _, f := range strings.Split(*flagSizes, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("-sizes: %q is not a count of names", f)
		}
		sizes = append(sizes, n)
	}
	base := *flagWork
	if base == "" {
		base = t.TempDir()
	}
	base, _ = filepath.Abs(base)
	// Every flag given but these is passed on.
	var pass []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "sizes", "names", "work":
		default:
			if !strings.HasPrefix(f.Name, "test.") {
				pass = append(pass, "-"+f.Name+"="+f.Value.String())
			}
		}
	})
	var runs []summary
	for _, n := range sizes {
		work := filepath.Join(base, fmt.Sprintf("n%d", n))
		logStep(t, "cost curve: the bench at %d names in %s", n, work)
		args := append([]string{"-test.run=^TestBench$", "-test.v", "-test.timeout=0", "-names", fmt.Sprint(n), "-work", work}, pass...)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("the bench at %d names: %v", n, err)
		}
		s, err := readSummary(filepath.Join(work, "summary.json"))
		if err != nil {
			t.Fatalf("the bench at %d names: %v", n, err)
		}
		runs = append(runs, s)
	}
	var b strings.Builder
	curveTable(func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }, runs)
	fmt.Print(b.String())
	os.WriteFile(filepath.Join(base, "curve.txt"), []byte(b.String()), 0o644)
}

// curveOf prints the cost curve of the summaries of runs made before
// (-curve-of), so that runs of one machine at different times, or a size
// rerun alone, make a curve without the whole bench again.
func curveOf(t *testing.T) {
	var runs []summary
	for _, path := range strings.Split(*flagCurveOf, ",") {
		s, err := readSummary(strings.TrimSpace(path))
		if err != nil {
			t.Fatalf("-curve-of: %v", err)
		}
		if len(runs) > 0 && s.Names <= runs[len(runs)-1].Names {
			t.Fatalf("-curve-of: %s has %d names, not more than the run before it", path, s.Names)
		}
		runs = append(runs, s)
	}
	curveTable(func(format string, args ...any) { fmt.Printf(format, args...) }, runs)
}

// readSummary reads a run's summary.json.
func readSummary(path string) (summary, error) {
	var s summary
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err == nil && s.Names <= 0 {
		err = fmt.Errorf("no count of names")
	}
	if err != nil {
		return summary{}, fmt.Errorf("summary %s: %w", path, err)
	}
	return s, nil
}

// curveTable prints each figure at each size with the exponent k of
// cost ∝ N^k between consecutive sizes.
func curveTable(p func(string, ...any), runs []summary) {
	p("\n== cost curve: each figure at each size; k = ln(cost2/cost1) / ln(N2/N1) between consecutive sizes (1 = linear)\n")
	p("%-34s", "figure")
	for i, r := range runs {
		p(" | %14s", fmt.Sprintf("N=%d", r.Names))
		if i > 0 {
			p(" %6s", "k")
		}
	}
	p("\n")
	secs := func(d time.Duration) float64 { return d.Seconds() }
	figures := []struct {
		name  string
		value func(summary) float64
		show  func(float64) string
	}{
		{"gds build wall, s", func(s summary) float64 { return secs(s.BuildWall) }, fmtF("%.1f")},
		{"gds build CPU, s", func(s summary) float64 { return secs(s.BuildCPU) }, fmtF("%.1f")},
		{"gds peak build memory (anon), MiB", func(s summary) float64 { return float64(s.BuildPeakAnon) / (1 << 20) }, fmtF("%.0f")},
		{"gds peak build RSS, MiB", func(s summary) float64 { return float64(s.BuildPeakRSS) / (1 << 20) }, fmtF("%.0f")},
		{"gds disk, MiB", func(s summary) float64 { return float64(s.Disk) / (1 << 20) }, fmtF("%.0f")},
		{"gds serving RSS, MiB", func(s summary) float64 { return float64(s.ServingRSS) / (1 << 20) }, fmtF("%.0f")},
		{"gds CPU per contains answer, us", func(s summary) float64 { return us(s.ContainsCPU) }, fmtF("%.1f")},
		{"gds CPU per strict answer, us", func(s summary) float64 { return us(s.StrictCPU) }, fmtF("%.1f")},
		{"PostgreSQL build wall, s", func(s summary) float64 { return secs(s.PGBuildWall) }, fmtF("%.1f")},
		{"PostgreSQL build CPU, s", func(s summary) float64 { return secs(s.PGBuildCPU) }, fmtF("%.1f")},
		{"PostgreSQL disk, MiB", func(s summary) float64 { return float64(s.PGDisk) / (1 << 20) }, fmtF("%.0f")},
		{"CSV extraction (harness), s", func(s summary) float64 { return secs(s.PGExtract) }, fmtF("%.1f")},
	}
	for _, f := range figures {
		p("%-34s", f.name)
		for i, r := range runs {
			v := f.value(r)
			p(" | %14s", f.show(v))
			if i > 0 {
				p(" %6s", exponent(f.value(runs[i-1]), v, runs[i-1].Names, r.Names))
			}
		}
		p("\n")
	}
}

func fmtF(format string) func(float64) string {
	return func(v float64) string { return fmt.Sprintf(format, v) }
}

// exponent is k of cost ∝ N^k between two sizes, "-" when either cost is
// not measured.
func exponent(c1, c2 float64, n1, n2 int64) string {
	if c1 <= 0 || c2 <= 0 || n1 <= 0 || n2 <= 0 || n1 == n2 {
		return "-"
	}
	return fmt.Sprintf("%.2f", math.Log(c2/c1)/math.Log(float64(n2)/float64(n1)))
}
