//go:build linux && amd64

package sandbox

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// seedScratch copies each file in into scratch (a fresh directory of the
// job root) before the command starts: directories 0700 and the file
// 0600, owned by the command's uid. A host file that is not a regular
// file, or over its bound, refuses the run (fault.InvalidInput
// sandbox.scratch naming it).
func seedScratch(scratch string, in []ScratchFile, owner int) error {
	for _, f := range in {
		if err := seedOne(scratch, f, owner); err != nil {
			return scratchErr(f, err)
		}
	}
	return nil
}

func seedOne(scratch string, f ScratchFile, owner int) error {
	// O_NONBLOCK: a FIFO at the host path would block the open (and the
	// run) until some writer came; it is refused below as not regular.
	src, err := os.OpenFile(f.Host, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Size() > f.Max:
		return errors.New("larger than its bound")
	}
	dst := filepath.Join(scratch, filepath.FromSlash(f.Rel))
	if err := mkdirOwned(scratch, filepath.Dir(dst), owner); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.LimitReader(src, f.Max))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = chown(dst, owner)
	}
	return err
}

// mkdirOwned creates the directories from scratch down to dir, 0700 and
// owned by the command's uid (scratch itself exists).
func mkdirOwned(scratch, dir string, owner int) error {
	rel, _ := filepath.Rel(scratch, dir)
	if rel == "." {
		return nil
	}
	p := scratch
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, c)
		if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := chown(p, owner); err != nil {
			return err
		}
	}
	return nil
}

// collectScratch copies each file out of the ended job's scratch to its
// host file. What the command left is untrusted: it is opened beneath
// the job root without following any symlink or blocking on a FIFO, must
// be a regular file within its bound, and is written to a new 0600 file; anything else is
// skipped (the caller finds no host file).
func collectScratch(root string, out []ScratchFile) {
	if len(out) == 0 {
		return
	}
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(rfd)
	for _, f := range out {
		collectOne(rfd, f)
	}
}

func collectOne(rfd int, f ScratchFile) {
	// O_NONBLOCK: the command may have left a FIFO there, and with its
	// tree ended a blocking open would wait for a writer for good; the
	// Stat below then skips it (a regular file reads the same).
	fd, err := openBeneath(rfd, "scratch/"+f.Rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return
	}
	src := os.NewFile(uintptr(fd), f.Rel)
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > f.Max {
		return
	}
	dst, err := os.OpenFile(f.Host, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	// The file may still grow through a survivor's descriptor: copy at
	// most Max+1 bytes and drop a file that reached it.
	n, err := io.Copy(dst, io.LimitReader(src, f.Max+1))
	if cerr := dst.Close(); err != nil || cerr != nil || n > f.Max {
		os.Remove(f.Host)
	}
}

func scratchErr(f ScratchFile, err error) error {
	return invalid("sandbox.scratch", "cannot carry "+f.Host+" into the sandbox's scratch as "+f.Rel+": "+err.Error())
}
