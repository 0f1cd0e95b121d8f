//go:build bench

package bench

import (
	"io"
	"os/exec"
	"syscall"
	"time"
)

// process is a server the bench runs in a process of its own: gds serve,
// a ceiling, nginx.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
}

// startProcess starts cmd with its output to log, killed should the bench
// die first, and watches for its exit.
func startProcess(cmd *exec.Cmd, log io.Writer) (*process, error) {
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	return p, nil
}

// stop ends the process (SIGTERM, SIGKILL after 30 seconds) and waits for
// it.
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}
