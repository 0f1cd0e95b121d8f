package admin

import "runtime"

// analystNice is the scheduling priority (nice) of the thread an analysts'
// query runs on: the lowest, so that the kernel hands the cores to public
// searches whenever they have work, and the query runs in what they leave.
// gds serve keeps one Go scheduler thread beyond the search slots
// (--spare-procs), so a query held back this way never holds a slot's
// thread.
const analystNice = 19

// lowPriority runs fn on an operating-system thread of its own at
// analystNice and waits for it. The thread ends with fn (its goroutine
// exits locked to it), so no other goroutine ever runs at that priority.
// A panic in fn is raised again in the caller, where the handler's
// recovery answers it.
func lowPriority(fn func()) {
	done := make(chan any, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		defer func() { done <- recover() }()
		setThreadNice(analystNice)
		fn()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}
