//go:build linux && amd64

package sandbox

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Job-root directories of the git view (see gitRoots): the lower tree's
// attach point until the overlay holds it, the layer that points
// core.worktree at the workspace, and the empty layer under a read-only
// view without one (overlayfs needs two lower layers when it has no
// upper one).
const (
	lowerGitDir = "lowergit"
	gitFixDir   = "gitfix"
	gitEmptyDir = "gitempty"
)

// worktreeOverride is appended to the git directory's config in the fix
// layer: git uses the last core.worktree it reads.
const worktreeOverride = "\n# coagent8: the work tree inside the sandbox\n[core]\n\tworktree = " + insideWorkspace + "\n"

// prepareGit creates the git view's job-root directories, the candidate's
// git upper and work directories and, for a root supervisor, the
// idmapped read-only clone of the common directory (returned; nil
// otherwise: PID 1 clones it).
func prepareGit(g *gitRoots, jobRoot string) (*os.File, error) {
	if err := os.Mkdir(filepath.Join(jobRoot, lowerGitDir), 0o700); err != nil {
		return nil, unavailable("gitdir", "a git lower-layer mount point in the job root", err)
	}
	if g.worktree {
		if err := writeGitFix(g, filepath.Join(jobRoot, gitFixDir)); err != nil {
			return nil, unavailable("gitdir", "the git directory's work-tree layer", err)
		}
	} else if g.upper == "" {
		if err := os.Mkdir(filepath.Join(jobRoot, gitEmptyDir), 0o555); err != nil {
			return nil, unavailable("gitdir", "an empty git layer in the job root", err)
		}
	}
	if g.upper != "" {
		if err := os.Mkdir(g.upper, 0o755); err != nil {
			return nil, unavailable("gitdir", "a writable candidate git directory", err)
		}
		if err := chown(g.upper, childOwner()); err != nil {
			return nil, unavailable("gitdir", "chown of the candidate's git directory", err)
		}
		if err := os.Mkdir(g.work, 0o700); err != nil {
			return nil, unavailable("gitdir", "a writable candidate git directory", err)
		}
	}
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return idmappedTree(g.host)
}

// writeGitFix writes fix/<config> = the git directory's config plus the
// core.worktree override, owned by the command's user (so a candidate's
// git may rewrite its own copy).
func writeGitFix(g *gitRoots, fix string) error {
	b, err := os.ReadFile(filepath.Join(g.host, g.config))
	if err != nil {
		return err
	}
	dst := filepath.Join(fix, g.config)
	for d := filepath.Dir(dst); ; d = filepath.Dir(d) {
		defer chown(d, childOwner())
		if d == fix {
			break
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, append(b, worktreeOverride...), 0o644); err != nil {
		return err
	}
	return chown(dst, childOwner())
}

// gitView plans the git directory at root+g.inside: an overlay whose
// lower layers are the common directory read-only, under the fix layer
// when there is one, with the candidate's git-upper as its upper layer or,
// in the read profile, read-only above an empty layer. fd is the
// supervisor's idmapped tree or -1. Never the tree itself, even read-only:
// a host process listening on a unix socket in the git directory was
// connectable through it (see readView).
func (p *plan) gitView(g *gitRoots, jobRoot, root string, fd int) {
	dst := root + g.inside
	p.mkdirAll("mount point "+g.inside, root, dst)
	lower := filepath.Join(jobRoot, lowerGitDir)
	if fd >= 0 {
		p.call("gitdir: attach the idmapped git directory", unix.SYS_MOVE_MOUNT, uintptr(fd), p.cstr(""), atFDCWD,
			p.cstr(lower), unix.MOVE_MOUNT_F_EMPTY_PATH)
		p.call("gitdir: attach the idmapped git directory", unix.SYS_CLOSE, uintptr(fd))
	} else {
		p.cloneInto(g.host, lower)
		p.setattr("gitdir: read-only lower layer", lower, attrRO, true)
	}
	lowers := lower
	switch {
	case g.worktree:
		lowers = filepath.Join(jobRoot, gitFixDir) + ":" + lower
	case g.upper == "":
		lowers = lower + ":" + filepath.Join(jobRoot, gitEmptyDir)
	}
	flags, opts := uintptr(unix.MS_NOSUID|unix.MS_NODEV), "lowerdir="+lowers+",userxattr"
	if g.upper != "" {
		opts += ",upperdir=" + g.upper + ",workdir=" + g.work + ",volatile"
		p.extraRW = append(p.extraRW, g.inside)
	} else {
		flags |= unix.MS_RDONLY // two lower layers and no upper: read-only
	}
	p.mount("gitdir: overlay", "overlay", dst, "overlay", flags, opts)
	p.call("gitdir: detach the lower tree", unix.SYS_UMOUNT2, p.cstr(lower), unix.MNT_DETACH)
}
