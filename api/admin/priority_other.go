//go:build !linux

package admin

// setThreadNice does nothing where threads' priorities are not set by gds.
func setThreadNice(int) {}

// threadNice is 0 where threads' priorities are not set by gds.
func threadNice() int { return 0 }
