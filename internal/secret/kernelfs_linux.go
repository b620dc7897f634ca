//go:build linux

package secret

import (
	"os"

	"golang.org/x/sys/unix"
)

// kernelFS reports whether f lives on a file system the kernel makes up
// (procfs, sysfs, …): /proc/self/environ is a regular file there, and
// naming it would send coagent8's whole environment as one credential.
func kernelFS(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return true // unknown: refuse (fail closed)
	}
	switch st.Type {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC,
		unix.SECURITYFS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC, unix.BPF_FS_MAGIC:
		return true
	}
	return false
}
