//go:build soak

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gds/snapshots"
)

// soakLoad is the soak's traffic: paced public requests from many
// clients, an error flood, analysts' heavy queries and the reindexes.
type soakLoad struct {
	t                         *testing.T
	cfg                       soakConfig
	public, replica, admin    string
	names                     []string
	ids                       []int64
	character                 int64
	token                     string
	cached                    []string
	affiliation, local, sugg  bool
	client                    *http.Client
	tokens                    chan struct{}
	stopping                  chan struct{}
	wg                        sync.WaitGroup
	started                   time.Time
	shed, flooded, sentNormal atomic.Int64

	mu       sync.Mutex
	cur      soakCounts // the window under way
	first    string     // the first failure seen
	first4xx string     // the first 4xx of a normal client
	swaps    []string   // failed swaps
	pending  sync.WaitGroup
}

// soakCounts are one window's outcomes.
type soakCounts struct {
	normal, normal5xx, normal4xx, normal420, lost    int
	flood, flood400, flood420, floodOther            int
	analystOK, analystBusy, analystTimeout, analystX int
	latency                                          []float32 // ms, normal public requests
	// causes counts public 5xx by status and error message; at holds
	// the seconds into the run each one was answered.
	causes map[string]int
	at     []float64
}

func newSoakLoad(t *testing.T, cfg soakConfig, public, replica, admin string, names []string, ids []int64, character int64, token string) *soakLoad {
	l := &soakLoad{t: t, cfg: cfg, public: public, replica: replica, admin: admin, names: names, ids: ids, character: character, token: token,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.clients * 4}},
		tokens: make(chan struct{}, 4096), stopping: make(chan struct{})}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 64 {
		l.cached = append(l.cached, "/latest/search/?"+url.Values{"search": {names[rng.IntN(len(names))]},
			"categories": {"character,corporation,solar_system"}}.Encode())
	}
	// The routes others are adding: used when the server has them.
	some, _ := json.Marshal(l.ids[:min(len(l.ids), 10)])
	l.affiliation = l.probe("POST", public+"/latest/characters/affiliation/", string(some))
	local, _ := json.Marshal(names[:min(len(names), 20)])
	l.local = l.probe("POST", public+"/latest/local/", string(local))
	l.sugg = l.probe("GET", public+"/latest/suggest/?search=jit", "")
	t.Logf("routes: affiliation %v, local %v, suggest %v", l.affiliation, l.local, l.sugg)
	return l
}

func (l *soakLoad) probe(method, u, body string) bool {
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// calibrate runs the public mix closed-loop (every client sends its next
// request when the last is answered) for d and returns requests a second.
func (l *soakLoad) calibrate(d time.Duration) float64 {
	var n atomic.Int64
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range l.cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			for time.Now().Before(end) {
				l.normal(rng, false)
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	l.mu.Lock()
	l.cur = soakCounts{} // calibration is not a window
	l.mu.Unlock()
	return float64(n.Load()) / d.Seconds()
}

// start paces the public mix at rate requests a second and starts the
// flood and the analysts.
func (l *soakLoad) start(rate float64) {
	l.started = time.Now()
	l.wg.Add(1)
	go func() { // the pace: tokens for the clients, never more than due
		defer l.wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var sent int64
		for {
			select {
			case <-l.stopping:
				return
			case now := <-tick.C:
				for due := int64(rate * now.Sub(l.started).Seconds()); sent < due; sent++ {
					select {
					case l.tokens <- struct{}{}:
					default:
						l.shed.Add(1) // every client busy: the server is behind
					}
				}
			}
		}
	}()
	for i := range l.cfg.clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for {
				select {
				case <-l.stopping:
					return
				case <-l.tokens:
					l.normal(rng, true)
				}
			}
		}()
	}
	l.wg.Add(1)
	go l.flood()
	for i := range 2 {
		l.wg.Add(1)
		go l.analyst(i)
	}
}

func (l *soakLoad) stop() {
	close(l.stopping)
	l.wg.Wait()
	l.pending.Wait() // the last reindex
}

// normal sends one request of the public mix from one of 1,024 clients
// that make no errors.
func (l *soakLoad) normal(rng *rand.Rand, replicas bool) {
	base := l.public
	if replicas && rng.IntN(10) == 0 {
		base = l.replica
	}
	name := l.names[rng.IntN(len(l.names))]
	var req *http.Request
	switch p := rng.IntN(100); {
	case p < 25:
		req, _ = http.NewRequest("GET", base+l.cached[rng.IntN(len(l.cached))], nil)
	case p < 35:
		req, _ = http.NewRequest("GET", base+"/latest/search/?"+url.Values{"search": {name}, "categories": {"character,corporation"}, "strict": {"true"}}.Encode(), nil)
	case p < 50:
		ids, _ := json.Marshal(l.pick(rng, 5))
		req, _ = http.NewRequest("POST", base+"/latest/universe/names/", bytes.NewReader(ids))
	case p < 55:
		base = l.public // the token is the primary's
		req, _ = http.NewRequest("GET", fmt.Sprintf("%s/latest/characters/%d/search/?%s", base, l.character,
			url.Values{"search": {soakFragment(rng, name)}, "categories": {"character,structure"}}.Encode()), nil)
		req.Header.Set("Authorization", "Bearer "+l.token)
	case p < 63 && l.affiliation:
		ids, _ := json.Marshal(l.pick(rng, 20))
		req, _ = http.NewRequest("POST", base+"/latest/characters/affiliation/", bytes.NewReader(ids))
	case p < 69 && l.local:
		names := make([]string, 20)
		for i := range names {
			names[i] = l.names[rng.IntN(len(l.names))]
		}
		body, _ := json.Marshal(names)
		req, _ = http.NewRequest("POST", base+"/latest/local/", bytes.NewReader(body))
	case p < 75 && l.sugg:
		req, _ = http.NewRequest("GET", base+"/latest/suggest/?"+url.Values{"search": {soakFragment(rng, name)}}.Encode(), nil)
	default: // contains
		cats := []string{"agent", "alliance", "character", "constellation", "corporation", "faction", "inventory_type", "region", "solar_system", "station"}
		rng.Shuffle(len(cats), func(i, j int) { cats[i], cats[j] = cats[j], cats[i] })
		req, _ = http.NewRequest("GET", base+"/latest/search/?"+url.Values{"search": {soakFragment(rng, name)},
			"categories": {strings.Join(cats[:1+rng.IntN(4)], ",")}}.Encode(), nil)
	}
	if req.Method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.18.%d.%d", rng.IntN(4), rng.IntN(256)))
	start := time.Now()
	status, msg, err := l.doRead(req)
	ms := float32(time.Since(start).Microseconds()) / 1000
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &l.cur
	c.normal++
	switch {
	case err != nil:
		c.lost++
		l.failLocked(req, err.Error())
		return
	case status >= 500:
		c.normal5xx++
		cause := strconv.Itoa(status) + " " + msg
		l.failLocked(req, cause)
		if c.causes == nil {
			c.causes = map[string]int{}
		}
		c.causes[cause]++
		c.at = append(c.at, math.Round(time.Since(l.started).Seconds()*10)/10)
	case status == 420:
		c.normal420++
		l.failLocked(req, "420 to a client that made no error")
	case status >= 400:
		c.normal4xx++
		if l.first4xx == "" {
			l.first4xx = fmt.Sprintf("%s %s: %d", req.Method, req.URL, status)
		}
	}
	c.latency = append(c.latency, ms)
}

// flood sends bad searches, each from a new client (IPv4 addresses and
// IPv6 /64s by turns) at SOAK_FLOOD_RATE a second.
func (l *soakLoad) flood() {
	defer l.wg.Done()
	if l.cfg.floodRate <= 0 {
		return
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var sent int
	for i := 0; ; {
		select {
		case <-l.stopping:
			return
		case now := <-tick.C:
			for due := int(float64(l.cfg.floodRate) * now.Sub(l.started).Seconds()); sent < due; sent++ {
				i++
				ip := fmt.Sprintf("10.%d.%d.%d", byte(i>>16), byte(i>>8), byte(i))
				if i%2 == 0 {
					ip = fmt.Sprintf("2001:db8:%x:%x::1", i>>16, i&0xffff)
				}
				req, _ := http.NewRequest("GET", l.public+"/latest/search/?search=ab&categories=character", nil)
				req.Header.Set("X-Forwarded-For", ip)
				status, err := l.do(req)
				l.mu.Lock()
				c := &l.cur
				c.flood++
				switch {
				case err != nil:
					c.lost++
					l.failLocked(req, err.Error())
				case status == 400:
					c.flood400++
				case status == 420:
					c.flood420++
				default:
					c.floodOther++
					l.failLocked(req, "flood answered "+strconv.Itoa(status))
				}
				l.mu.Unlock()
			}
		}
	}
}

// analyst sends a ten-clause wildcard query with facets over every
// character every 15 seconds (two analysts, so at times at once):
// answered, refused while the other runs (503) or stopped at
// --analyst-timeout (504).
func (l *soakLoad) analyst(i int) {
	defer l.wg.Done()
	q := url.Values{"q": {"name:*a* name:*e* name:*i* name:*o* name:*u* name:*an* name:*er* name:*in* name:*ar* name:*on*"},
		"category": {"character"}, "facets": {"corporation_id,alliance_id"}, "limit": {"50"}}
	for {
		select {
		case <-l.stopping:
			return
		default:
		}
		req, _ := http.NewRequest("GET", l.admin+"/admin/query?"+q.Encode(), nil)
		status, err := l.do(req)
		l.mu.Lock()
		c := &l.cur
		switch {
		case err != nil:
			c.lost++
			l.failLocked(req, err.Error())
		case status == 200:
			c.analystOK++
		case status == 503:
			c.analystBusy++
		case status == 504:
			c.analystTimeout++
		default:
			c.analystX++
			l.failLocked(req, "analysts' query answered "+strconv.Itoa(status))
		}
		l.mu.Unlock()
		select {
		case <-l.stopping:
			return
		case <-time.After(15 * time.Second):
		}
	}
}

func (l *soakLoad) do(req *http.Request) (int, error) {
	status, _, err := l.doRead(req)
	return status, err
}

// doRead is do that also returns a 5xx answer's error message.
func (l *soakLoad) doRead(req *http.Request) (status int, msg string, err error) {
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		var body struct {
			Error string `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		msg = body.Error
	}
	if _, cerr := io.Copy(io.Discard, resp.Body); err == nil {
		err = cerr
	}
	return resp.StatusCode, msg, err
}

func (l *soakLoad) failLocked(req *http.Request, msg string) {
	if l.first == "" {
		l.first = req.Method + " " + req.URL.String() + ": " + msg
	}
}

// pick returns n different IDs (a repeated ID is a 400).
func (l *soakLoad) pick(rng *rand.Rand, n int) []int64 {
	out := make([]int64, 0, n)
	for len(out) < min(n, len(l.ids)) {
		if id := l.ids[rng.IntN(len(l.ids))]; !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// reindex has the primary build snapshot (1% of the characters renamed
// from the live one) as generation gen, in the background, and checks that
// it goes live and is published; it returns gen.
func (l *soakLoad) reindex(primary *soakServer, snapshot string, gen uint64) uint64 {
	l.pending.Wait() // one at a time
	l.pending.Add(1)
	go func() {
		defer l.pending.Done()
		body, _ := json.Marshal(map[string]any{"snapshot": snapshot})
		resp, err := l.client.Post("http://"+primary.admin+"/admin/reindex", "application/json", bytes.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusAccepted {
			l.swapFailed(fmt.Sprintf("reindex to generation %d: %v %v", gen, err, resp))
			return
		}
		resp.Body.Close()
		asked := time.Since(l.started).Seconds()
		deadline := time.Now().Add(20 * time.Minute)
		for time.Now().Before(deadline) {
			st := primary.status(l.t)
			if st.Failures > 0 {
				l.swapFailed(fmt.Sprintf("generation %d: %d failed builds", gen, st.Failures))
				return
			}
			if st.Live != nil && st.Live.ID >= gen && st.Fleet.Publish != nil && st.Fleet.Publish.Published >= gen {
				l.t.Logf("reindex to generation %d: asked at %.1f s, live and published by %.1f s", gen, asked, time.Since(l.started).Seconds())
				return
			}
			time.Sleep(time.Second)
		}
		l.swapFailed(fmt.Sprintf("generation %d not live and published within 20 minutes", gen))
	}()
	return gen
}

func (l *soakLoad) swapFailed(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.swaps = append(l.swaps, msg)
}

// soakWindow is what the soak reports of one window.
type soakWindow struct {
	N                 int     `json:"window"`
	EndMinutes        float64 `json:"end_minutes"`
	Requests          int     `json:"requests"`
	PerSecond         float64 `json:"per_second"`
	P50, P99          float64 // ms, public requests
	Public5xx         int     `json:"public_5xx"`
	Public4xx         int     `json:"public_4xx"`
	Public420         int     `json:"public_420"`
	Lost              int     `json:"lost"`
	Flood             int     `json:"flood"`
	Flood420          int     `json:"flood_420"`
	FloodOther        int     `json:"flood_other"`
	AnalystOK         int     `json:"analyst_ok"`
	AnalystBusy       int     `json:"analyst_503"`
	AnalystTimeout    int     `json:"analyst_504"`
	AnalystOther      int     `json:"analyst_other"`
	RSSMiB            float64 `json:"rss_mib"` // median of the window's 10-s samples
	RSSMaxMiB         float64 `json:"rss_max_mib"`
	ReplicaRSSMiB     float64 `json:"replica_rss_mib"`
	Generation        uint64  `json:"generation"`
	ReplicaGeneration uint64  `json:"replica_generation"`
	Shed              int64   `json:"shed"`
	// Causes counts the window's public 5xx by status and message; At is
	// when each was answered, in seconds into the run.
	Causes map[string]int `json:"public_5xx_causes,omitempty"`
	At     []float64      `json:"public_5xx_at,omitempty"`
}

func (w soakWindow) String() string {
	return fmt.Sprintf("window %d (%4.1f min): %d requests (%.0f/s) p50 %.2f ms p99 %.2f ms; 5xx %d lost %d 4xx %d 420 %d; "+
		"flood %d (420 %d); analysts ok %d 503 %d 504 %d; RSS %.1f MiB (max %.1f), replica %.1f MiB; generation %d, replica %d; shed %d",
		w.N, w.EndMinutes, w.Requests, w.PerSecond, w.P50, w.P99, w.Public5xx, w.Lost, w.Public4xx, w.Public420, w.Flood, w.Flood420,
		w.AnalystOK, w.AnalystBusy, w.AnalystTimeout, w.RSSMiB, w.RSSMaxMiB, w.ReplicaRSSMiB, w.Generation, w.ReplicaGeneration, w.Shed) +
		w.causes()
}

// causes lists the window's 5xx by cause and when they came, if any.
func (w soakWindow) causes() string {
	if len(w.Causes) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(w.Causes))
	var b strings.Builder
	b.WriteString("; 5xx by cause:")
	for _, k := range keys {
		fmt.Fprintf(&b, " %dx %q", w.Causes[k], k)
	}
	fmt.Fprintf(&b, " at %v s", w.At)
	return b.String()
}

// window ends the window under way and returns its report.
func (l *soakLoad) window(n int, rss, rssMax, replicaRSS float64, gen uint64, primary, replica *soakServer) soakWindow {
	l.mu.Lock()
	c := l.cur
	l.cur = soakCounts{}
	l.mu.Unlock()
	lat := c.latency
	slices.Sort(lat)
	w := soakWindow{N: n, EndMinutes: time.Since(l.started).Minutes(), Requests: c.normal,
		PerSecond: float64(c.normal) / l.cfg.window.Seconds(), Public5xx: c.normal5xx, Public4xx: c.normal4xx,
		Public420: c.normal420, Lost: c.lost, Flood: c.flood, Flood420: c.flood420, FloodOther: c.floodOther,
		AnalystOK: c.analystOK, AnalystBusy: c.analystBusy, AnalystTimeout: c.analystTimeout, AnalystOther: c.analystX,
		RSSMiB: rss / (1 << 20), RSSMaxMiB: rssMax / (1 << 20), ReplicaRSSMiB: replicaRSS / (1 << 20),
		Generation: primary.generation(l.t), ReplicaGeneration: replica.generation(l.t), Shed: l.shed.Swap(0),
		Causes: c.causes, At: c.at}
	if len(lat) > 0 {
		w.P50, w.P99 = float64(lat[len(lat)/2]), float64(lat[len(lat)*99/100])
	}
	return w
}

// check fails the soak on what must never happen.
func (l *soakLoad) check(t *testing.T, windows []soakWindow) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad soakWindow
	for _, w := range windows {
		bad.Public5xx += w.Public5xx
		bad.Lost += w.Lost
		bad.Public420 += w.Public420
		bad.FloodOther += w.FloodOther
		bad.AnalystOther += w.AnalystOther
		bad.Requests += w.Requests
	}
	if bad.Public5xx+bad.Lost+bad.Public420+bad.FloodOther+bad.AnalystOther > 0 {
		t.Errorf("%d public 5xx, %d lost answers, %d 420s to clients without errors, %d odd flood answers, %d odd analysts' answers; first: %s",
			bad.Public5xx, bad.Lost, bad.Public420, bad.FloodOther, bad.AnalystOther, l.first)
	}
	if l.first4xx != "" {
		t.Logf("first 4xx of a normal client: %s", l.first4xx)
	}
	if bad.Requests == 0 {
		t.Error("no requests were answered")
	}
	for _, s := range l.swaps {
		t.Errorf("failed swap: %s", s)
	}
	if len(windows) > 1 {
		base := windows[0].RSSMiB
		for _, w := range windows[1:] {
			if w.RSSMiB > base*1.05 {
				t.Errorf("window %d: RSS %.1f MiB, over 5%% above the first window's %.1f MiB", w.N, w.RSSMiB, base)
			}
		}
	}
}

// soakLogCounter counts the public port's request log lines and their
// bytes, keeping the tail of the output for a failure's report.
type soakLogCounter struct {
	mu           sync.Mutex
	partial      []byte
	lines, bytes int64
	tail         soakTail
}

func (c *soakLogCounter) Write(p []byte) (int, error) {
	c.tail.Write(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := c.partial[:i+1]
		if bytes.Contains(line, []byte(`"listener":"public"`)) && bytes.Contains(line, []byte(`"message":"request"`)) {
			c.lines++
			c.bytes += int64(len(line))
		}
		c.partial = c.partial[i+1:]
	}
	c.partial = slices.Clone(c.partial)
	return len(p), nil
}

func (c *soakLogCounter) counts() (lines, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines, c.bytes
}

// soakFragment is a fragment of at least three runes of name, as people
// type them into a contains search, or the whole name.
func soakFragment(rng *rand.Rand, name string) string {
	r := []rune(name)
	if len(r) <= 3 || rng.IntN(3) == 0 {
		return name
	}
	i := rng.IntN(len(r) - 2)
	if f := strings.TrimSpace(string(r[i : i+3+rng.IntN(len(r)-i-2)])); len([]rune(f)) >= 3 {
		return f
	}
	return name
}

// soakNames reads a character ID, names to search for (characters first)
// and characters' IDs for lookups from the snapshot.
func soakNames(t *testing.T, dir string) (character int64, names []string, ids []int64) {
	t.Helper()
	snap, err := snapshots.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []snapshots.Kind{snapshots.Characters, snapshots.SolarSystems, snapshots.Types, snapshots.Corporations, snapshots.Stations} {
		err := snap.Each(k, func(r snapshots.Record, _ snapshots.Line) error {
			if c, ok := r.(*snapshots.Character); ok && len(ids) < 20000 {
				if character == 0 {
					character = c.ID
				}
				ids = append(ids, c.ID)
			}
			if n, ok := r.(snapshots.Named); ok && len(names) < 20000 {
				if name := n.DisplayName(); len([]rune(name)) >= 3 {
					names = append(names, name)
				}
			}
			if len(names) >= 20000 && len(ids) >= 20000 {
				return errSoakEnough
			}
			return nil
		})
		if err != nil && err != errSoakEnough {
			t.Fatal(err)
		}
	}
	if character == 0 || len(names) == 0 {
		t.Fatalf("snapshot %s has no characters or names to search for", dir)
	}
	return character, names, ids
}

var errSoakEnough = fmt.Errorf("enough")

// soakSample is one reading of a server's memory.
type soakSample struct{ rss, heap, goroutines float64 }

// soakMeasure reads the process and Go runtime gauges from /metrics.
func soakMeasure(t *testing.T, c *http.Client, admin string) soakSample {
	t.Helper()
	resp, err := c.Get(admin + "/metrics")
	if err != nil {
		t.Errorf("/metrics: %v", err)
		return soakSample{}
	}
	defer resp.Body.Close()
	var s soakSample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "process_resident_memory_bytes":
			s.rss = v
		case "go_memstats_heap_inuse_bytes":
			s.heap = v
		case "go_goroutines":
			s.goroutines = v
		}
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func maxOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}

func soakEnvDuration(t *testing.T, key string, def time.Duration) time.Duration {
	t.Helper()
	return envValue(t, key, def, "a duration such as 10m", func(s string) (time.Duration, bool) {
		d, err := time.ParseDuration(s)
		return d, err == nil && d >= 0
	})
}

func soakEnvInt(t *testing.T, key string, def int) int {
	t.Helper()
	return envValue(t, key, def, "a whole number", func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0
	})
}

// soakTail keeps the last 64 KiB of a server's output for a failure
// report, and its "listening" lines, which a long build's log pushes out
// of the tail before the public listener logs its own.
type soakTail struct {
	mu        sync.Mutex
	b         []byte
	line      []byte // the line being written
	listening []byte
}

func (w *soakTail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if over := len(w.b) - 64<<10; over > 0 {
		w.b = bytes.Clone(w.b[over:])
	}
	for rest := p; len(rest) > 0; {
		line, more, full := bytes.Cut(rest, []byte("\n"))
		w.line = append(w.line, line...)
		if !full {
			break
		}
		if bytes.Contains(w.line, []byte(`"listening"`)) {
			w.listening = append(append(w.listening, w.line...), '\n')
		}
		w.line, rest = w.line[:0], more
	}
	return len(p), nil
}

// addrs returns the addresses the server logged it listens on so far.
func (w *soakTail) addrs() (public, admin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return listeningAddrs(string(w.listening))
}

func (w *soakTail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
