//go:build linux && amd64

package sandbox

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// systemDirs are bound read-only when present on the host (symlinks such
// as a merged-/usr /bin are recreated as symlinks).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcBinds are host /etc entries the dynamic loader and common tools need.
// The rest of /etc (credentials, host configuration) is not visible.
var etcBinds = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"}

// etcFiles are synthesized.
var etcFiles = map[string]string{
	"passwd":        "root:x:0:0:root:/job/scratch:/bin/sh\nnobody:x:65534:65534:nobody:/job/scratch:/usr/sbin/nologin\n",
	"group":         "root:x:0:\nnogroup:x:65534:\n",
	"hosts":         "127.0.0.1 localhost\n::1 localhost\n",
	"nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
	"hostname":      "sandbox\n",
}

// devNodes are bound from the host /dev; nothing else (no tty, no pts).
var devNodes = []string{"null", "zero", "full", "random", "urandom"}

const (
	attrRO    = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	attrRW    = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	attrDev   = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC
	tmpfsFlag = unix.MS_NOSUID | unix.MS_NODEV
)

// root plans the fresh root under jobRoot/root and the pivot into it
// (notes §3 step 6). Host paths are examined here, in the supervisor; the
// child only replays the resulting system calls.
func (p *plan) root(j job, jobRoot string) error {
	root := filepath.Join(jobRoot, "root")
	p.mount("mount namespace", "", "/", "", unix.MS_REC|unix.MS_SLAVE, "")
	p.mount("root tmpfs", "tmpfs", root, "tmpfs", tmpfsFlag, "mode=0755,size=4m")
	if err := p.system(root); err != nil {
		return err
	}
	if err := p.etc(root); err != nil {
		return err
	}
	p.dev(root)
	p.proc(root)
	p.mkdir("/tmp", root+"/tmp", 0o777)
	p.mount("/tmp tmpfs", "tmpfs", root+"/tmp", "tmpfs", tmpfsFlag, fmt.Sprintf("mode=1777,size=%d", j.limits.Tmp))
	// The job root's children are bound read-write; nothing else of the
	// job root (or the host) is writable.
	for _, d := range []string{"workspace", "scratch", "artifacts"} {
		if d == "workspace" && j.candidate != nil {
			p.candidateView(j.candidate, jobRoot, root, p.fdTree)
			continue
		}
		if d == "workspace" && j.verifyUpper != "" {
			p.verifyView(j.readWS, j.verifyUpper, root, p.fdTree)
			continue
		}
		if d == "workspace" && j.readWS != "" {
			p.readView(j.readWS, jobRoot, root, p.fdTree)
			continue
		}
		p.bind(root, filepath.Join(jobRoot, d), root+"/job/"+d, true, attrRW)
	}
	if j.git != nil {
		p.gitView(j.git, jobRoot, root, p.fdGit)
	}
	for i, b := range j.binds {
		if fd, ok := p.fdPins[i]; ok {
			p.attachPinned(root, b.Dst, fd)
			continue
		}
		p.bindNoSymlinks(root, b.Src, root+b.Dst, b.Dir, attrRO)
	}
	p.pivot(root)
	return nil
}

func (p *plan) system(root string) error {
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(d)
			if err != nil {
				return unavailable("setup", "system symlink "+d, err)
			}
			p.symlink("system symlink "+d, t, root+d, 0)
			continue
		}
		p.bind(root, d, root+d, true, attrRO)
	}
	return nil
}

func (p *plan) etc(root string) error {
	p.mkdir("/etc", root+"/etc", 0o755)
	for _, name := range slices.Sorted(maps.Keys(etcFiles)) {
		p.writeFile("/etc/"+name, root+"/etc/"+name, []byte(etcFiles[name]), unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC)
	}
	for _, e := range etcBinds {
		fi, err := os.Lstat(e)
		switch {
		case err != nil:
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			if t, err := os.Readlink(e); err == nil {
				// Best effort, as before: a dangling link is harmless.
				p.symlink(e, t, root+e, unix.EEXIST)
			}
		default:
			p.bind(root, e, root+e, fi.IsDir(), attrRO)
		}
	}
	return nil
}

func (p *plan) dev(root string) {
	dev := root + "/dev"
	p.mkdir("/dev", dev, 0o755)
	p.mount("/dev tmpfs", "tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k")
	for _, n := range devNodes {
		p.bind(root, "/dev/"+n, dev+"/"+n, false, attrDev)
	}
	for _, l := range [][2]string{{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}} {
		p.symlink("/dev/"+l[0], l[1], dev+"/"+l[0], 0)
	}
	p.mkdir("/dev/shm", dev+"/shm", 0o755)
	p.mount("/dev/shm tmpfs", "tmpfs", dev+"/shm", "tmpfs", tmpfsFlag, "mode=1777,size=16m")
}

// userNSLimits are the sandbox user namespace's own bounds on the
// per-user kernel counts that every user namespace up to the host's
// keeps (/proc/sys/user, kernel/ucount.c). At the host's level the
// sandbox's count is the supervisor's user's (the namespace's owner), and
// a child namespace starts unbounded: a command holding every inotify
// instance left that user none until the run ended (its editors' file
// watchers, and the pin check of every other run, pin_watch_linux.go).
// Per run, a few instances and watches suffice for an agent runtime.
// fanotify_init, unshare and clone with namespace flags are denied, so
// the other counts cannot grow.
var userNSLimits = [][2]string{{"max_inotify_instances", "16"}, {"max_inotify_watches", "8192"}}

// proc mounts a fresh /proc for the new PID namespace (only sandbox PIDs
// are visible, notes test 12), sets the user namespace's own limits
// (userNSLimits; the files are this namespace's and writable with its
// CAP_SYS_RESOURCE, which PID 1 still holds) and makes /proc/sys
// read-only.
func (p *plan) proc(root string) {
	proc := root + "/proc"
	p.mkdir("/proc", proc, 0o555)
	p.mount("fresh /proc", "proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	for _, l := range userNSLimits {
		p.writeFile("user namespace limit "+l[0], proc+"/sys/user/"+l[0], []byte(l[1]), unix.O_WRONLY)
	}
	p.mount("bind "+proc+"/sys", proc+"/sys", proc+"/sys", "", unix.MS_BIND|unix.MS_REC, "")
	p.setattr("mount attributes /proc/sys", proc+"/sys", attrRO|unix.MOUNT_ATTR_NOEXEC, true)
}

// pivot makes root the new "/", detaches the host root, makes the root
// tmpfs read-only and names the host.
func (p *plan) pivot(root string) {
	p.call("pivot_root", unix.SYS_CHDIR, p.cstr(root))
	dot := p.cstr(".")
	p.call("pivot_root", unix.SYS_PIVOT_ROOT, dot, dot)
	p.call("detach host root", unix.SYS_UMOUNT2, dot, unix.MNT_DETACH)
	p.call("pivot_root", unix.SYS_CHDIR, p.cstr("/"))
	p.setattr("read-only root", "/", unix.MOUNT_ATTR_RDONLY, false)
	p.call("hostname", unix.SYS_SETHOSTNAME, p.cstr("sandbox"), uintptr(len("sandbox")))
}
