//go:build linux

package process

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

var (
	pidnsOnce sync.Once
	pidnsOK   bool
)

// pidnsAvailable reports (once) whether a PID namespace can be created, by
// starting /bin/true in one. Hosts without user namespaces fall back to the
// process group, and Containment reports it.
func pidnsAvailable() bool {
	pidnsOnce.Do(func() {
		cmd := exec.Command("/bin/true")
		attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
		if os.Geteuid() != 0 {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		}
		cmd.SysProcAttr = attr
		pidnsOK = cmd.Run() == nil
	})
	return pidnsOK
}
