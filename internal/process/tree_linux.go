//go:build linux

package process

import (
	"os"
	"os/exec"
	"syscall"
)

var sigTerm = syscall.SIGTERM

// configure places the child in a new PID namespace (plus a user namespace
// mapping the caller's ids when not root), its own process group, and asks
// the kernel to SIGKILL it when coagent8 dies. When the first process of a
// PID namespace dies, the kernel kills the rest of the namespace.
func configure(cmd *exec.Cmd, isolated bool) string {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if !isolated {
		cmd.SysProcAttr = attr
		return "process-group"
	}
	attr.Cloneflags = syscall.CLONE_NEWPID
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	return "pid-namespace"
}

// signalGroup sends sig to the child's process group (members that called
// setsid are not reached; killTree reaches them through the namespace).
func (p *Proc) signalGroup(sig syscall.Signal) {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// killTree SIGKILLs the group and the namespace's first process (which
// takes the whole namespace down).
func (p *Proc) killTree() {
	if p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
}
