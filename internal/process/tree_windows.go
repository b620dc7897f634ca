//go:build windows

package process

import (
	"os/exec"
	"syscall"
)

var sigTerm = syscall.Signal(15)

// configure starts the child in a new process group. Descendants are not
// contained on Windows yet (a Job Object with kill-on-close is the planned
// mechanism); Containment says so.
func configure(cmd *exec.Cmd, _ bool) string {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	return "process-only"
}

func (p *Proc) signalGroup(syscall.Signal) {}

func (p *Proc) killTree() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

func isolate() bool               { return false }
func noIsolation()                {}
func isolationRefused(error) bool { return false }
