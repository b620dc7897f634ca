package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperCmd re-executes this binary as a helper in fresh user and mount
// namespaces that map the caller's uid and gid to 0, as the candidate
// profile's job namespace would.
func helperCmd(role string, dirs ...string) *exec.Cmd {
	self, err := os.Executable()
	check(err)
	cmd := exec.Command(self, "-role", role, "-dirs", strings.Join(dirs, ","))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	return cmd
}

// helper runs inside the namespaces: it mounts the overlay (lower, upper,
// work, merged), prints "mount_ns=N" (the mount(2) call alone), checks that
// the merged view lists the lower tree, and for role "edit" makes the
// 10-file edit; role "volatile" mounts with -o volatile. It returns the
// exit status.
func helper(role string, d []string) int {
	if len(d) != 4 {
		fmt.Fprintln(os.Stderr, "helper: want lower,upper,work,merged")
		return 2
	}
	opts := "lowerdir=" + d[0] + ",upperdir=" + d[1] + ",workdir=" + d[2] + ",userxattr"
	if role == "volatile" {
		// No sync of the upper filesystem at unmount: without it the
		// namespace's teardown runs syncfs(2) on the host filesystem
		// and waits for all of its dirty data, not only the candidate's.
		opts += ",volatile"
	}
	t0 := time.Now()
	err := unix.Mount("overlay", d[3], "overlay", 0, opts)
	el := time.Since(t0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper: mount:", err)
		return 1
	}
	fmt.Printf("mount_ns=%d\n", el.Nanoseconds())
	if _, err := os.Stat(filepath.Join(d[3], dirName(0))); err != nil {
		fmt.Fprintln(os.Stderr, "helper: merged view:", err)
		return 1
	}
	if role == "edit" {
		if err := edit(d[3]); err != nil {
			fmt.Fprintln(os.Stderr, "helper: edit:", err)
			return 1
		}
	}
	return 0
}

// edit is the 10-file edit of issue 15's target: 6 files modified, 1
// added, 1 deleted, 1 renamed, and directory pkg007 replaced (rm -rf,
// mkdir, 1 new file: an opaque directory).
func edit(m string) error {
	nth := func(dir, n int) string {
		es, err := os.ReadDir(filepath.Join(m, dirName(dir)))
		if err != nil || len(es) <= n {
			return filepath.Join(m, "missing")
		}
		return filepath.Join(m, dirName(dir), es[n].Name())
	}
	in := func(dir int, name string) string { return filepath.Join(m, dirName(dir), name) }
	var steps []func() error
	for i := range 6 {
		steps = append(steps, func() error { return os.WriteFile(nth(i, 0), []byte("edited\n"), 0o644) })
	}
	steps = append(steps,
		func() error { return os.WriteFile(in(1, "new.txt"), []byte("new\n"), 0o644) },
		func() error { return os.Remove(nth(2, 1)) },
		func() error { return os.Rename(nth(3, 1), in(3, "renamed.txt")) },
		func() error { return os.RemoveAll(filepath.Join(m, dirName(7))) },
		func() error { return os.Mkdir(filepath.Join(m, dirName(7)), 0o755) },
		func() error { return os.WriteFile(in(7, "only.txt"), []byte("only\n"), 0o644) },
	)
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// parseMount reads "mount_ns=N" from the helper's output.
func parseMount(out []byte) (time.Duration, error) {
	s, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "mount_ns=")
	if !ok {
		return 0, fmt.Errorf("helper output %q", out)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return time.Duration(n), err
}
