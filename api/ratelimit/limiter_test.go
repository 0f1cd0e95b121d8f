package ratelimit

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"gds/api/apitest"
)

// newClock is a clock tests move by hand, at a fixed start.
func newClock() *apitest.Clock {
	return apitest.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
}

// oneClient is a limiter of limit l on a test clock, with the key of
// its one client, 192.0.2.1.
func oneClient(t *testing.T, l Limit) (*apitest.Clock, *Limiter, *Group, Key) {
	t.Helper()
	c := newClock()
	lim, g := newTestLimiter(t, c, l, 0)
	return c, lim, g, lim.IPKey(netip.MustParseAddr("192.0.2.1"), "")
}

func newTestLimiter(t *testing.T, c *apitest.Clock, l Limit, maxKeys int) (*Limiter, *Group) {
	t.Helper()
	lim, err := New(Config{Groups: map[string]Limit{"search": l, "other": l}, Now: c.Now, MaxKeys: maxKeys})
	if err != nil {
		t.Fatal(err)
	}
	return lim, lim.Group("search")
}

// answer admits one request and settles it with status; ok false when
// the request was refused.
func answer(g *Group, k Key, status int) (t Ticket, used, remaining int) {
	t = g.Admit(k)
	if !t.Allowed {
		return t, 0, t.Remaining
	}
	used, remaining = g.Settle(&t, status)
	return t, used, remaining
}

func TestCostByStatus(t *testing.T) {
	for status, want := range map[int]int{200: 2, 204: 2, 304: 1, 301: 1, 400: 5, 404: 5, 429: 5, 500: 0, 503: 0, 100: 0} {
		if got := Cost(status); got != want {
			t.Errorf("Cost(%d) = %d, want %d", status, got, want)
		}
	}
}

func TestSpendPerStatus(t *testing.T) {
	_, lim, g, k := oneClient(t, Limit{MaxTokens: 20, Window: 10 * time.Second})
	left := 20
	for _, status := range []int{200, 304, 404, 500, 204} {
		tk, used, remaining := answer(g, k, status)
		left -= Cost(status)
		if !tk.Allowed || used != Cost(status) || remaining != left {
			t.Fatalf("status %d: allowed %v used %d remaining %d; want used %d remaining %d",
				status, tk.Allowed, used, remaining, Cost(status), left)
		}
	}
	// 20 - 2 - 1 - 5 - 0 - 2 = 10 left: five more successful answers, the
	// sixth is refused.
	for i := range 5 {
		if tk, _, _ := answer(g, k, 200); !tk.Allowed {
			t.Fatalf("answer %d refused with tokens left", i)
		}
	}
	if tk, _, remaining := answer(g, k, 200); tk.Allowed || remaining != 0 {
		t.Fatalf("a spent bucket admitted a request (remaining %d)", remaining)
	}
	if g.Limited() != 1 {
		t.Errorf("Limited() = %d, want 1", g.Limited())
	}
	// Another group and another client have their own buckets.
	if tk, _, _ := answer(lim.Group("other"), k, 200); !tk.Allowed {
		t.Error("the other group shares the spent bucket")
	}
	if tk, _, _ := answer(g, lim.IPKey(netip.MustParseAddr("192.0.2.2"), ""), 200); !tk.Allowed {
		t.Error("another client shares the spent bucket")
	}
}

// Admission needs the cost of a successful answer: with one token left a
// request is refused.
func TestAdmissionNeedsTwoTokens(t *testing.T) {
	_, _, g, k := oneClient(t, Limit{MaxTokens: 7, Window: 10 * time.Second})
	answer(g, k, 200)
	answer(g, k, 200)
	answer(g, k, 200) // 6 spent, 1 left
	if tk, _, remaining := answer(g, k, 200); tk.Allowed || remaining != 1 {
		t.Fatalf("allowed %v with remaining %d, want refused with 1", tk.Allowed, remaining)
	}
}

func TestFloatingReturn(t *testing.T) {
	c, _, g, k := oneClient(t, Limit{MaxTokens: 10, Window: 10 * time.Second})
	answer(g, k, 200) // 2 at 0s
	c.Add(3 * time.Second)
	answer(g, k, 200) // 2 at 3s
	answer(g, k, 200) // 2 at 3s
	c.Add(2 * time.Second)
	answer(g, k, 200) // 2 at 5s
	answer(g, k, 200) // 2 at 5s: all 10 spent
	tk := g.Admit(k)
	if tk.Allowed {
		t.Fatal("admitted with the bucket spent")
	}
	// The 2 tokens of 0s are the first back: one window and at most a
	// tenth later, at 11s; it is 5s now.
	if tk.RetryAfter != 6*time.Second {
		t.Errorf("RetryAfter = %v, want 6s", tk.RetryAfter)
	}
	c.Add(tk.RetryAfter - time.Millisecond)
	if g.Admit(k).Allowed {
		t.Fatal("admitted before the first tokens came back")
	}
	c.Add(time.Millisecond)
	tk, used, remaining := answer(g, k, 200)
	if !tk.Allowed || used != 2 || remaining != 0 {
		t.Fatalf("at 11s: allowed %v used %d remaining %d, want the 2 returned tokens spent", tk.Allowed, used, remaining)
	}
	// Not a fixed reset: at 14s only the tokens of 3s are back.
	c.Add(3 * time.Second)
	if tk := g.Admit(k); !tk.Allowed || tk.Remaining != 2 {
		t.Fatalf("at 14s: allowed %v remaining %d, want 4 back, 2 reserved", tk.Allowed, tk.Remaining)
	}
}

// AdmitAt counts by the time the caller read for the request, not the
// limiter's clock (which stays at 0s here).
func TestAdmitAtCallersTime(t *testing.T) {
	c, lim, g, k := oneClient(t, Limit{MaxTokens: 4, Window: 10 * time.Second})
	start := c.Now()
	for i := range 2 {
		if tk := g.AdmitAt(k, start); !tk.Allowed || tk.Remaining != 2-2*i {
			t.Fatalf("admission %d at 0s: allowed %v remaining %d", i, tk.Allowed, tk.Remaining)
		}
	}
	tk := g.AdmitAt(k, start.Add(5*time.Second))
	if tk.Allowed || tk.RetryAfter != 6*time.Second {
		t.Fatalf("at 5s: allowed %v RetryAfter %v, want refused for 6s", tk.Allowed, tk.RetryAfter)
	}
	if tk := g.AdmitAt(k, start.Add(11*time.Second)); !tk.Allowed || tk.Remaining != 2 {
		t.Fatalf("at 11s: allowed %v remaining %d, want the tokens of 0s back", tk.Allowed, tk.Remaining)
	}
	// A reading before the limiter's epoch counts as the epoch.
	if tk := g.AdmitAt(lim.IPKey(netip.MustParseAddr("192.0.2.2"), ""), start.Add(-time.Hour)); !tk.Allowed {
		t.Fatal("a reading before the epoch was refused")
	}
}

// Retry-After names when enough tokens are back for the request, not
// just the first ones: a 4xx overdraws the bucket.
func TestRetryAfterCountsEnoughTokens(t *testing.T) {
	c, _, g, k := oneClient(t, Limit{MaxTokens: 10, Window: 10 * time.Second})
	answer(g, k, 304) // 1 at 0s
	c.Add(4 * time.Second)
	answer(g, k, 404) // 5 at 4s
	answer(g, k, 404) // 5 at 4s: 11 spent, 3 must come back
	tk := g.Admit(k)
	if tk.Allowed || tk.Remaining != 0 {
		t.Fatalf("allowed %v remaining %d", tk.Allowed, tk.Remaining)
	}
	// The 1 token of 0s is back at 11s, not enough; the 10 of 4s at 15s.
	if tk.RetryAfter != 11*time.Second {
		t.Errorf("RetryAfter = %v, want 11s", tk.RetryAfter)
	}
}

// A 5xx costs nothing: the reservation comes back at once.
func TestServerErrorRefunds(t *testing.T) {
	_, _, g, k := oneClient(t, Limit{MaxTokens: 4, Window: 10 * time.Second})
	for range 10 {
		if tk, used, remaining := answer(g, k, 503); !tk.Allowed || used != 0 || remaining != 4 {
			t.Fatalf("503: allowed %v used %d remaining %d", tk.Allowed, used, remaining)
		}
	}
}

func TestKeys(t *testing.T) {
	c := newClock()
	lim, _ := newTestLimiter(t, c, Limit{MaxTokens: 10, Window: time.Minute}, 0)
	ip := netip.MustParseAddr("192.0.2.1")
	keys := map[string]Key{
		"ip":        lim.IPKey(ip, ""),
		"other ip":  lim.IPKey(netip.MustParseAddr("192.0.2.2"), ""),
		"ip:app":    lim.IPKey(ip, "app"),
		"ip:app2":   lim.IPKey(ip, "app2"),
		"app:char":  lim.UserKey("app", 90000001),
		"app:char2": lim.UserKey("app", 90000002),
		"app2:char": lim.UserKey("app2", 90000001),
		"ipv6":      lim.IPKey(netip.MustParseAddr("2001:db8:0:1::1"), ""),
		"ipv6 /64'": lim.IPKey(netip.MustParseAddr("2001:db8:0:2::1"), ""),
	}
	seen := map[Key]string{}
	for name, k := range keys {
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s share a key", name, other)
		}
		seen[k] = name
	}
	if lim.IPKey(netip.MustParseAddr("::ffff:192.0.2.1"), "") != keys["ip"] {
		t.Error("an IPv4-mapped address is keyed apart from its IPv4 address")
	}
	if lim.IPKey(netip.MustParseAddr("2001:db8:0:1:ffff::9"), "") != keys["ipv6"] {
		t.Error("two addresses of one IPv6 /64 are keyed apart")
	}
	if lim.UserKey("app", 90000001) != keys["app:char"] {
		t.Error("the same application and character get different keys")
	}
}

// Buckets whose tokens are all back are forgotten, and the number kept
// never passes MaxKeys however many clients come.
func TestEvictionBoundsBuckets(t *testing.T) {
	c := newClock()
	const maxKeys = 64 * 16
	lim, g := newTestLimiter(t, c, Limit{MaxTokens: 10, Window: 10 * time.Second}, maxKeys)
	for i := range 20_000 {
		k := lim.IPKey(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), "")
		if !g.Admit(k).Allowed {
			t.Fatalf("client %d refused on its first request", i)
		}
		if n := lim.Len(); n > maxKeys {
			t.Fatalf("%d buckets kept after %d clients, bound %d", n, i+1, maxKeys)
		}
	}
	// A window and a tenth later, every bucket is whole again: the next
	// request into each shard sweeps that shard's away. Keys are keyed
	// hashes, so new clients come until every shard has had one (512 alone
	// missed a shard in about one run of fifty).
	c.Add(11 * time.Second)
	var seen [numShards]bool
	live, shards := 0, 0
	for ; live < 64*8 || shards < numShards; live++ {
		k := lim.IPKey(netip.AddrFrom4([4]byte{172, 16, byte(live >> 8), byte(live)}), "")
		g.Admit(k)
		if sh := bucketKey(k, g.id) >> shardShift; !seen[sh] {
			seen[sh], shards = true, shards+1
		}
	}
	if n := lim.Len(); n > live {
		t.Errorf("%d buckets kept, want at most the %d live ones", n, live)
	}
}

// A full table forgets the bucket whose tokens come back soonest among
// those sampled, never the one being charged.
func TestSettleAfterEviction(t *testing.T) {
	c := newClock()
	lim, g := newTestLimiter(t, c, Limit{MaxTokens: 10, Window: 10 * time.Second}, 64)
	k := lim.IPKey(netip.MustParseAddr("192.0.2.1"), "")
	tk := g.Admit(k)
	for i := range 5000 {
		g.Admit(lim.IPKey(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), ""))
	}
	// Whether or not k's bucket survived, settling is safe and sane.
	if used, remaining := g.Settle(&tk, 404); used != 5 || remaining < 0 || remaining > 10 {
		t.Errorf("used %d remaining %d", used, remaining)
	}
}

func TestConcurrentAdmitsStayWithinBudget(t *testing.T) {
	c := newClock()
	lim, g := newTestLimiter(t, c, Limit{MaxTokens: 100, Window: time.Minute}, 0)
	k := lim.UserKey("app", 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if tk, _, _ := answer(g, k, 200); tk.Allowed {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if admitted != 50 {
		t.Errorf("%d successful answers admitted from 100 tokens, want 50", admitted)
	}
}

func TestNewRefusesBadGroups(t *testing.T) {
	for _, l := range []Limit{{1, time.Minute}, {10, 0}, {10, 48 * time.Hour}, {maxTokens + 1, time.Minute}} {
		if _, err := New(Config{Groups: map[string]Limit{"g": l}}); err == nil {
			t.Errorf("New accepted %+v", l)
		}
	}
}

func ExampleLimit_String() {
	fmt.Println(Limit{MaxTokens: 1200, Window: 5 * time.Minute})
	// Output: 1200/5m
}
