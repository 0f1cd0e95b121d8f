//go:build !linux

package main

import (
	"os"
	"os/exec"
)

// thisBinary is the binary this process runs.
func thisBinary() (string, error) { return os.Executable() }

// runNiced starts cmd, tells started its pid and waits for it to end. Its
// CPU priority is the server's: gds lowers a build's on Linux only.
func runNiced(cmd *exec.Cmd, started func(pid int)) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	started(cmd.Process.Pid)
	return cmd.Wait()
}
