//go:build linux && amd64

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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

// buildRoot builds the fresh root under JobRoot/root and pivots into it
// (notes §3 step 6).
func buildRoot(p childPolicy) error {
	root := filepath.Join(p.JobRoot, "root")
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return step("mount namespace", err)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", tmpfsFlag, "mode=0755,size=4m"); err != nil {
		return step("root tmpfs", err)
	}
	steps := []func(string, childPolicy) error{mountSystem, mountEtc, mountDev, mountProc, mountTmp, mountJob, mountBinds}
	for _, s := range steps {
		if err := s(root, p); err != nil {
			return err
		}
	}
	return pivot(root)
}

func mountSystem(root string, _ childPolicy) error {
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(d)
			if err == nil {
				err = os.Symlink(t, root+d)
			}
			if err != nil {
				return step("system symlink "+d, err)
			}
			continue
		}
		if err := bindMount(d, root+d, true, attrRO); err != nil {
			return err
		}
	}
	return nil
}

func mountEtc(root string, _ childPolicy) error {
	if err := os.Mkdir(root+"/etc", 0o755); err != nil {
		return step("/etc", err)
	}
	for name, body := range etcFiles {
		if err := os.WriteFile(root+"/etc/"+name, []byte(body), 0o644); err != nil {
			return step("/etc/"+name, err)
		}
	}
	for _, e := range etcBinds {
		fi, err := os.Lstat(e)
		switch {
		case err != nil:
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			if t, err := os.Readlink(e); err == nil {
				_ = os.Symlink(t, root+e)
			}
		default:
			if err := bindMount(e, root+e, fi.IsDir(), attrRO); err != nil {
				return err
			}
		}
	}
	return nil
}

func mountDev(root string, _ childPolicy) error {
	dev := root + "/dev"
	if err := os.Mkdir(dev, 0o755); err != nil {
		return step("/dev", err)
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return step("/dev tmpfs", err)
	}
	for _, n := range devNodes {
		if err := bindMount("/dev/"+n, dev+"/"+n, false, attrDev); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return step("/dev/"+name, err)
		}
	}
	if err := os.Mkdir(dev+"/shm", 0o755); err != nil {
		return step("/dev/shm", err)
	}
	return step("/dev/shm tmpfs", unix.Mount("tmpfs", dev+"/shm", "tmpfs", tmpfsFlag, "mode=1777,size=16m"))
}

// mountProc mounts a fresh /proc for the new PID namespace (only sandbox
// PIDs are visible, notes test 12) and makes /proc/sys read-only.
func mountProc(root string, _ childPolicy) error {
	proc := root + "/proc"
	if err := os.Mkdir(proc, 0o555); err != nil {
		return step("/proc", err)
	}
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return step("fresh /proc", err)
	}
	return bindMount(proc+"/sys", proc+"/sys", true, attrRO|unix.MOUNT_ATTR_NOEXEC)
}

func mountTmp(root string, p childPolicy) error {
	if err := os.Mkdir(root+"/tmp", 0o1777); err != nil {
		return step("/tmp", err)
	}
	opts := fmt.Sprintf("mode=1777,size=%d", p.TmpBytes)
	return step("/tmp tmpfs", unix.Mount("tmpfs", root+"/tmp", "tmpfs", tmpfsFlag, opts))
}

// mountJob binds the job root's children read-write; nothing else of the
// job root (or the host) is writable.
func mountJob(root string, p childPolicy) error {
	for _, d := range []string{"workspace", "scratch", "artifacts"} {
		if err := bindMount(filepath.Join(p.JobRoot, d), root+"/job/"+d, true, attrRW); err != nil {
			return err
		}
	}
	return nil
}

func mountBinds(root string, p childPolicy) error {
	for _, b := range p.Binds {
		if err := bindMount(b.Src, root+b.Dst, b.Dir, attrRO); err != nil {
			return err
		}
	}
	return nil
}

// bindMount binds src at dst (creating the mount point) and sets attrs on
// the whole bound tree (mount_setattr with AT_RECURSIVE, so submounts are
// read-only too).
func bindMount(src, dst string, dir bool, attrs uint64) error {
	if err := mountPoint(dst, dir); err != nil {
		return step("mount point "+dst, err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return step("bind "+src, err)
	}
	err := unix.MountSetattr(-1, dst, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attrs})
	return step("mount attributes "+src, err)
}

func mountPoint(dst string, dir bool) error {
	if dir {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return f.Close()
}

// pivot makes root the new "/" and detaches the host root, then makes the
// root tmpfs read-only.
func pivot(root string) error {
	if err := unix.Chdir(root); err != nil {
		return step("pivot_root", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return step("pivot_root", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return step("detach host root", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return step("pivot_root", err)
	}
	if err := unix.MountSetattr(-1, "/", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return step("read-only root", err)
	}
	return step("hostname", unix.Sethostname([]byte("sandbox")))
}
