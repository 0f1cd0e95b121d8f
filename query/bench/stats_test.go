//go:build bench

package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Timing summarizes one timed scenario.
type Timing struct {
	Queries  int           `json:"queries"`
	Wall     time.Duration `json:"wall"`
	P50      time.Duration `json:"p50"`
	P95      time.Duration `json:"p95"`
	P99      time.Duration `json:"p99"`
	Max      time.Duration `json:"max"`
	Mean     time.Duration `json:"mean"`
	Errors   int           `json:"errors"`
	Measured bool          `json:"measured"`
	Note     string        `json:"note,omitempty"`
}

// QPS is queries per second over the scenario's wall time.
func (t Timing) QPS() float64 {
	if t.Wall <= 0 {
		return 0
	}
	return float64(t.Queries) / t.Wall.Seconds()
}

func summarize(lat []time.Duration, wall time.Duration, errs int) Timing {
	t := Timing{Queries: len(lat), Wall: wall, Errors: errs, Measured: true}
	if len(lat) == 0 {
		return t
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		i := int(p*float64(len(lat)) + 0.5)
		return lat[min(max(i-1, 0), len(lat)-1)]
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	t.P50, t.P95, t.P99, t.Max = pct(0.50), pct(0.95), pct(0.99), lat[len(lat)-1]
	t.Mean = sum / time.Duration(len(lat))
	return t
}

// runTimed runs do(i) for query indexes 0..n-1 in whole passes with the
// given number of concurrent clients, until at least minTime has passed
// (and at least one pass, at most maxPasses). Each client c calls do(c, i).
func runTimed(n, clients int, minTime time.Duration, maxPasses int, do func(client, i int) error) Timing {
	if n == 0 {
		return Timing{Note: "no queries"}
	}
	start := time.Now()
	var all []time.Duration
	errs := 0
	for pass := 0; pass < maxPasses; pass++ {
		var next atomic.Int64
		lats := make([][]time.Duration, clients)
		errc := make([]int, clients)
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				lat := make([]time.Duration, 0, n/clients+1)
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						break
					}
					t0 := time.Now()
					err := do(c, i)
					lat = append(lat, time.Since(t0))
					if err != nil {
						errc[c]++
					}
				}
				lats[c] = lat
			}(c)
		}
		wg.Wait()
		for c := range lats {
			all = append(all, lats[c]...)
			errs += errc[c]
		}
		if time.Since(start) >= minTime {
			break
		}
	}
	return summarize(all, time.Since(start), errs)
}

// procStatus reads fields (in kB) of /proc/<pid>/status, e.g. VmHWM.
func procStatus(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, field+":") {
			v, _ := strconv.ParseInt(strings.Fields(line[len(field)+1:])[0], 10, 64)
			return v
		}
	}
	return 0
}

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat times.
const clockTick = 100

// procCPU is the CPU time (user and system) of a process, and with
// children also that of the children it has waited for: fields 14-17 of
// /proc/<pid>/stat.
func procCPU(pid int, children bool) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; fields start after ')'.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return 0
	}
	last := 13 // utime, stime: fields 14 and 15, f[11] and f[12]
	if children {
		last = 15 // and cutime, cstime
	}
	var ticks int64
	for _, v := range f[11:last] {
		n, _ := strconv.ParseInt(v, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTick
}

// treeCPU is the CPU time of a process tree: every live process's own and
// the root's waited-for children's (PostgreSQL's postmaster waits for its
// backends and parallel workers, so their time is counted when they exit).
func treeCPU(root int) time.Duration {
	total := procCPU(root, true)
	for _, pid := range processTree(root)[1:] {
		total += procCPU(pid, false)
	}
	return total
}

// pss returns the proportional set size of a process in kB.
func pss(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "Pss:") {
			v, _ := strconv.ParseInt(strings.Fields(line[4:])[0], 10, 64)
			return v
		}
	}
	return 0
}

// processTree returns pid and all its descendants.
func processTree(root int) []int {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		parent[pid] = int(procStatus(pid, "PPid"))
	}
	out := []int{root}
	for changed := true; changed; {
		changed = false
		for pid, pp := range parent {
			if slices.Contains(out, pp) && !slices.Contains(out, pid) {
				out = append(out, pid)
				changed = true
			}
		}
	}
	return out
}

// treeSampler tracks the peak summed PSS of a process tree.
type treeSampler struct {
	root int
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func sampleTree(root int, every time.Duration) *treeSampler {
	s := &treeSampler{root: root, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-time.After(every):
			}
		}
	}()
	return s
}

func (s *treeSampler) sample() {
	var sum int64
	for _, pid := range processTree(s.root) {
		sum += pss(pid)
	}
	if sum > s.peak.Load() {
		s.peak.Store(sum)
	}
}

// Stop ends sampling and returns the peak in bytes.
func (s *treeSampler) Stop() int64 {
	close(s.stop)
	<-s.done
	s.sample()
	return s.peak.Load() * 1024
}

// dirSize sums the allocated size of the files under dir, counting each
// hard-linked inode once.
func dirSize(dir string) int64 {
	var total int64
	seen := map[uint64]bool{}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if st, ok := statIno(info); ok {
			if seen[st] {
				return nil
			}
			seen[st] = true
		}
		total += info.Size()
		return nil
	})
	return total
}

func human(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}
