//go:build darwin || freebsd || netbsd || openbsd

package process

import (
	"os/exec"
	"syscall"
)

var sigTerm = syscall.SIGTERM

// configure puts the child in its own process group; descendants that
// leave the group are not contained on this platform (Containment says so).
func configure(cmd *exec.Cmd, _ bool) string {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return "process-group"
}

func (p *Proc) signalGroup(sig syscall.Signal) {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

func (p *Proc) killTree() {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func isolate() bool               { return false }
func noIsolation()                {}
func isolationRefused(error) bool { return false }
