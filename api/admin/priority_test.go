package admin

import (
	"runtime"
	"sync"
	"testing"
)

// An analysts' query runs on a thread at the lowest priority; the caller's
// thread keeps its own, no thread is handed back to the scheduler at the
// lowest, and a panic in the query reaches the caller.
func TestLowPriority(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("threads' priorities are set on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := threadNice()
	if base >= analystNice {
		t.Skipf("the test runs at nice %d already", base)
	}
	for range 10 {
		got := base
		lowPriority(func() { got = threadNice() })
		if got != analystNice {
			t.Fatalf("the query's thread runs at nice %d, want %d", got, analystNice)
		}
		if n := threadNice(); n != base {
			t.Fatalf("the caller's thread went from nice %d to %d", base, n)
		}
	}
	// Every thread the scheduler runs goroutines on afterwards is at the
	// process's priority.
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[int]int{}
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			mu.Lock()
			seen[threadNice()]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if seen[analystNice] > 0 {
		t.Errorf("%d goroutines ran on a thread at nice %d after the queries ended (%v)", seen[analystNice], analystNice, seen)
	}

	defer func() {
		if p := recover(); p != "query panicked" {
			t.Errorf("recovered %v, want the query's panic", p)
		}
	}()
	lowPriority(func() { panic("query panicked") })
	t.Error("a panic in the query did not reach the caller")
}
