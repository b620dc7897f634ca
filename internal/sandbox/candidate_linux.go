//go:build linux && amd64

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The candidate profile's workspace (issue 15 scope 1): overlayfs at
// /job/workspace, lower = the user's workspace (read-only), upper and
// work in the caller's candidate directory, mounted by PID 1 inside its
// user namespace with userxattr (without it, deleting a lower directory
// fails with EIO: notes/delegation.md §6). Creating the view copies
// nothing; the changes are read back from the upper directory
// (internal/candidate).
//
// Identity. Overlayfs checks permissions against the lower file's owner.
// A root supervisor's command runs as nobody, who may not modify the
// workspace owner's files; so the supervisor, which alone holds
// CAP_SYS_ADMIN over the host filesystem, clones the workspace as a
// detached mount tree and idmaps it (MOUNT_ATTR_IDMAP) with a user
// namespace that maps the workspace's owner to nobody. PID 1 attaches
// that tree and stacks the overlay on it; copy-ups and new files in the
// upper directory are then nobody's. An unprivileged supervisor's command
// runs as the supervisor's own uid (namespace root), which owns the
// workspace it may delegate: PID 1 clones the workspace itself. Running
// the agent as host root (mapping 0 to the workspace owner) was the other
// option; it would give the agent the owner checks of every root-owned
// file it can see, so the idmap was chosen.

// lowerDir is the job-root directory where the lower tree is attached
// until the overlay holds it (then detached: overlayfs keeps private
// clones of its layers).
const lowerDir = "lower"

// prepareCandidate creates the upper and work directories and, for a root
// supervisor, the idmapped lower tree (returned; nil otherwise).
func prepareCandidate(c *candidateRoots, jobRoot string) (*os.File, error) {
	if err := os.Mkdir(filepath.Join(jobRoot, lowerDir), 0o700); err != nil {
		return nil, unavailable("candidate", "a lower-layer mount point in the job root", err)
	}
	if c.seeded {
		if err := adoptSeed(c.upper, childOwner()); err != nil {
			return nil, err
		}
	} else if err := os.Mkdir(c.upper, 0o755); err != nil {
		return nil, unavailable("candidate", "a writable candidate directory", err)
	}
	if err := chown(c.upper, childOwner()); err != nil {
		return nil, unavailable("candidate", "chown of the candidate's upper directory", err)
	}
	if err := os.Mkdir(c.work, 0o700); err != nil {
		return nil, unavailable("candidate", "a writable candidate directory", err)
	}
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return idmappedTree(c.workspace)
}

// idmappedTree clones dir (opened without following symlinks) as a
// detached, read-only mount tree on which the owner of dir appears as
// nobody.
func idmappedTree(dir string) (*os.File, error) {
	var st unix.Stat_t
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_DIRECTORY,
		Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return nil, unavailable("candidate", "the workspace, opened without symlinks", err)
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, unavailable("candidate", "the workspace's owner", err)
	}
	ns, err := idmapUserns(st.Uid, st.Gid)
	if err != nil {
		return nil, err
	}
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return nil, unavailable("candidate", "a clone of the workspace mount (open_tree)", err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | attrRO, Userns_fd: uint64(ns)}
	empty := []byte{0}
	if _, _, e := unix.Syscall6(unix.SYS_MOUNT_SETATTR, uintptr(tree), uintptr(unsafe.Pointer(&empty[0])),
		unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0); e != 0 {
		unix.Close(tree)
		return nil, unavailable("candidate", "an idmapped mount of the workspace (its filesystem must support MOUNT_ATTR_IDMAP)", e)
	}
	return os.NewFile(uintptr(tree), "candidate-lower"), nil
}

// idmapNamespaces caches one idmap user namespace descriptor per
// workspace owner for the process's lifetime: a namespace lives as long
// as a descriptor refers to it, and creating one costs a process start
// (BenchmarkAgentProfiles: most of the candidate view's setup time).
var idmapNamespaces struct {
	sync.Mutex
	fds map[[2]uint32]int
}

// idmapUserns returns a (cached, never closed) user namespace descriptor
// mapping uid and gid to nobody.
func idmapUserns(uid, gid uint32) (int, error) {
	idmapNamespaces.Lock()
	defer idmapNamespaces.Unlock()
	if fd, ok := idmapNamespaces.fds[[2]uint32{uid, gid}]; ok {
		return fd, nil
	}
	fd, err := newIdmapUserns(uid, gid)
	if err != nil {
		return -1, err
	}
	if idmapNamespaces.fds == nil {
		idmapNamespaces.fds = map[[2]uint32]int{}
	}
	idmapNamespaces.fds[[2]uint32{uid, gid}] = fd
	return fd, nil
}

// newIdmapUserns creates the namespace. It needs a process to be created
// by: a child that stops at its first instruction (PTRACE_TRACEME stops
// it at execve, before this binary's code runs) and is killed as soon as
// its namespace is open.
func newIdmapUserns(uid, gid uint32) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return -1, unavailable("candidate", "this executable, to create an idmap namespace", err)
	}
	// The parent-death signal fires when the forking thread exits: keep
	// this goroutine on it until the child is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := &exec.Cmd{Path: exe, Args: []string{"coagent8-idmap"}, Env: []string{}, SysProcAttr: &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: int(uid), HostID: nobody, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: int(gid), HostID: nobody, Size: 1}},
		Ptrace:      true, Pdeathsig: syscall.SIGKILL}}
	if err := cmd.Start(); err != nil {
		return -1, unavailable("candidate", "a user namespace for the workspace idmap", err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	ns, err := unix.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, unavailable("candidate", "the idmap user namespace", err)
	}
	return ns, nil
}

// candidateView plans the overlay at root/job/workspace. volatile: the
// teardown of a non-volatile overlay runs syncfs on the upper filesystem
// and waits for all of its dirty data, the host's included (217–278 ms
// with 300 MB dirty, docs/PERFORMANCE.md); a candidate is disposable and
// its upper directory is read from the page cache after the run. fdTree is the
// supervisor's idmapped lower tree, or -1: PID 1 clones the workspace.
func (p *plan) candidateView(c *candidateRoots, jobRoot, root string, fdTree int) {
	lower := filepath.Join(jobRoot, lowerDir)
	if fdTree >= 0 {
		p.call("candidate: attach the idmapped workspace", unix.SYS_MOVE_MOUNT, uintptr(fdTree), p.cstr(""), atFDCWD,
			p.cstr(lower), unix.MOVE_MOUNT_F_EMPTY_PATH)
		p.call("candidate: attach the idmapped workspace", unix.SYS_CLOSE, uintptr(fdTree))
	} else {
		p.cloneInto(c.workspace, lower)
		p.setattr("candidate: read-only lower layer", lower, attrRO, true)
	}
	dst := root + insideWorkspace
	p.mkdirAll("mount point "+insideWorkspace, root, dst)
	p.mount("candidate: overlay", "overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV,
		"lowerdir="+lower+",upperdir="+c.upper+",workdir="+c.work+",userxattr,volatile")
	p.call("candidate: detach the lower tree", unix.SYS_UMOUNT2, p.cstr(lower), unix.MNT_DETACH)
}

// readLower is where the read profile's workspace tree is attached,
// inside the fresh root, until the overlay holds it.
const readLower = "/.read-lower"

// readView plans the read profile's projection at root/job/workspace: a
// read-only overlay of the workspace tree (the supervisor's idmapped
// read-only tree when fdTree ≥ 0, else a read-only clone PID 1 makes)
// above an empty directory of the job root (overlayfs needs two lower
// layers when it has no upper one; the empty one stays, since a removed
// layer root breaks reading the merged directories). Not the tree itself:
// a unix socket is reached by its inode, and a host process listening on
// a socket in the user's workspace (a development database, a language
// server) was connectable through the bound tree, since Landlock below
// ABI 9 does not govern connect and a read-only mount does not either.
// Through overlayfs the socket is an overlay inode no socket is bound to
// (ECONNREFUSED), as in the candidate profile.
func (p *plan) readView(ws, jobRoot, root string, fdTree int) {
	lower, empty := root+readLower, filepath.Join(jobRoot, lowerDir)
	p.mkdir("read: lower-layer mount point", lower, 0o700)
	p.mkdir("read: empty layer", empty, 0o555)
	p.attachLower("read", ws, lower, fdTree)
	dst := root + insideWorkspace
	p.mkdirAll("mount point "+insideWorkspace, root, dst)
	p.mount("read: read-only overlay", "overlay", dst, "overlay", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV,
		"lowerdir="+lower+":"+empty+",userxattr")
	p.call("read: detach the lower tree", unix.SYS_UMOUNT2, p.cstr(lower), unix.MNT_DETACH)
	p.call("read: remove the lower-layer mount point", unix.SYS_UNLINKAT, atFDCWD, p.cstr(lower), unix.AT_REMOVEDIR)
}
