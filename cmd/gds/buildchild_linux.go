package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
)

// thisBinary is the binary this process runs, even when an upgrade has
// replaced its file since: a child built by another gds version could
// write generations this one reads wrongly.
func thisBinary() (string, error) { return "/proc/self/exe", nil }

// runNiced starts cmd at nice buildNice, tells started its pid and waits
// for it to end.
//
// Linux keeps a nice value per thread, and a new thread or process takes
// its creator's: cmd is started from a thread of its own set to buildNice
// first, so that every thread of the child runs at it from birth (setting
// the child's after its start would miss the threads its Go runtime had
// started). The thread lives until the child ends, so that Pdeathsig kills
// the child should the server die, then ends with its goroutine.
func runNiced(cmd *exec.Cmd, started func(pid int)) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the niced thread ends with the goroutine
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), buildNice); err != nil {
			errc <- fmt.Errorf("lowering the build's CPU priority: %w", err)
			return
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			errc <- err
			return
		}
		started(cmd.Process.Pid)
		errc <- cmd.Wait()
	}()
	return <-errc
}
