package admin

import "syscall"

// setThreadNice sets the calling thread's nice value (Linux schedules
// threads, so PRIO_PROCESS with a thread ID names one thread). A failure
// leaves the thread at its priority: the query still runs.
func setThreadNice(nice int) {
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}

// threadNice is the calling thread's nice value (the system call answers
// 20 - nice).
func threadNice() int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		return 0
	}
	return 20 - p
}
