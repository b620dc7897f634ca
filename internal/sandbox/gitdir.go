package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// gitRoots is the git directory a workspace's ".git" file points to
// outside the workspace (a linked worktree: <main>/.git/worktrees/<name>
// with its common directory <main>/.git; a submodule checkout:
// <super>/.git/modules/<name>), projected into the read and candidate
// profiles (issue 15 scope 1). The whole common directory is mounted at
// the path git computes inside the sandbox from the ".git" file (absolute:
// the host path; relative: against /job/workspace), so the objects and
// refs the agent needs are there and git's own path arithmetic holds. The
// read profile sees it read-only; the candidate profile sees an overlay
// whose upper layer is the candidate directory's: the agent's commits,
// index, refs and any config or hook it writes land there, never in the
// user's repository, and nothing of coagent8 runs git over that layer.
type gitRoots struct {
	host   string // canonical common directory on the host
	inside string // its path inside the sandbox
	// worktree is set when the git directory's config names core.worktree
	// (a submodule's "../../../<name>"): a one-file layer above it points
	// core.worktree at /job/workspace instead of a path that does not
	// exist inside.
	worktree bool
	config   string // the git directory's config, relative to host
	// upper and work are the candidate's overlay directories ("" in the
	// read profile).
	upper, work string
}

// reasonGitDir refuses a ".git" file that cannot be projected.
const reasonGitDir = "sandbox.gitdir"

// admitGitDir inspects ws/.git. A directory (or none) needs nothing; a
// "gitdir:" file whose git directory lies outside ws returns its roots.
// candidateDir, when set, receives the overlay's upper/work directories.
// Refusals are INVALID_INPUT sandbox.gitdir naming what is wrong: the
// target is not a git directory (HEAD, objects), its common directory is
// not named like one (a ".git" component or a "*.git" name), overlaps coagent8's
// directories, the workspace or an extra bind, or would land inside the
// sandbox where the sandbox mounts its own (/proc, /dev, /job/*, system
// directories).
func (s *Sandbox) admitGitDir(ws, candidateDir string, binds []bind) (*gitRoots, error) {
	b, err := os.ReadFile(filepath.Join(ws, ".git"))
	if err != nil {
		return nil, nil // a directory, or no repository: the view holds it
	}
	target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
	if !ok || target == "" || strings.ContainsAny(target, "\x00\n") {
		return nil, invalid(reasonGitDir, "the workspace's .git file does not name a git directory")
	}
	gitdir, inside := target, path.Clean(target)
	if !path.IsAbs(target) {
		gitdir, inside = filepath.Join(ws, target), path.Join(insideWorkspace, target)
	}
	if gitdir, err = filepath.EvalSymlinks(gitdir); err != nil || !present(filepath.Join(gitdir, "HEAD")) {
		return nil, invalid(reasonGitDir, "the workspace's .git file points to "+target+", which is not a git directory")
	}
	common, insideCommon := gitdir, inside
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		common, insideCommon = filepath.Join(gitdir, cd), path.Join(inside, cd)
		if path.IsAbs(cd) {
			common, insideCommon = cd, path.Clean(cd)
		}
		if common, err = filepath.EvalSymlinks(common); err != nil {
			return nil, invalid(reasonGitDir, "the git directory's common directory does not exist")
		}
	}
	if within(common, ws) {
		return nil, nil // inside the workspace: the view holds it
	}
	g := &gitRoots{host: common, inside: insideCommon}
	if err := s.checkGitRoots(g, ws, gitdir, inside, binds); err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(common, gitdir)
	g.config = filepath.Join(rel, "config")
	g.worktree = configNamesWorktree(filepath.Join(gitdir, "config"))
	if candidateDir != "" {
		g.upper, g.work = filepath.Join(candidateDir, "git-upper"), filepath.Join(candidateDir, "git-work")
	}
	return g, nil
}

// checkGitRoots applies admitGitDir's refusals.
func (s *Sandbox) checkGitRoots(g *gitRoots, ws, gitdir, inside string, binds []bind) error {
	rel, err := filepath.Rel(g.host, gitdir)
	switch {
	case err != nil || strings.HasPrefix(rel, "..") || path.Join(g.inside, filepath.ToSlash(rel)) != inside:
		return invalid(reasonGitDir, "the git directory does not lie inside its common directory as seen from the workspace")
	case !present(filepath.Join(g.host, "objects")) || !gitNamed(g.host):
		return invalid(reasonGitDir, "the workspace's .git file points outside the workspace to a directory that is not a repository's git directory")
	case within(ws, g.host):
		return invalid(reasonGitDir, "the workspace lies inside its own git directory")
	}
	if _, err := s.admitRoot(g.host, true); err != nil {
		return candidateErr("the workspace's git directory", g.host, err)
	}
	if g.inside == "/" || g.inside == "/job" {
		return invalid(reasonGitDir, "the git directory would be projected at "+g.inside)
	}
	for _, own := range sandboxOwnDirs {
		if within(g.inside, own) {
			return invalid(reasonGitDir, "the git directory would be projected at "+g.inside+", which the sandbox mounts itself")
		}
	}
	for _, b := range binds {
		if within(b.Dst, g.inside) || within(g.inside, b.Dst) {
			return invalid(reasonGitDir, "the git directory's projection overlaps the read-only path "+b.Dst)
		}
	}
	return nil
}

// gitNamed reports whether p looks like a git directory by name: a
// component ".git" (…/.git, …/.git/modules/x) or a name ending ".git"
// (a bare repository): a stray .git file cannot project $HOME.
func gitNamed(p string) bool {
	for _, el := range strings.Split(p, string(filepath.Separator)) {
		if strings.HasSuffix(el, ".git") {
			return true
		}
	}
	return false
}

// configNamesWorktree reports whether a git config file sets
// core.worktree (a textual check: any "worktree" key line; an unneeded
// override is harmless).
func configNamesWorktree(p string) bool {
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, _, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.EqualFold(strings.TrimSpace(k), "worktree") {
			return true
		}
	}
	return false
}

func present(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// sandboxOwnDirs are where the sandbox mounts its own trees (the system
// directories of mount_linux.go included): no git directory is projected
// at or below them.
var sandboxOwnDirs = []string{"/etc", "/proc", "/sys", "/dev", "/run", "/var/run", insideWorkspace, insideScratch,
	insideArtifacts, "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// admitAgentGit is admitGitDir for an agent job's read or candidate
// workspace.
func (s *Sandbox) admitAgentGit(j job) (*gitRoots, error) {
	switch {
	case j.candidate != nil:
		return s.admitGitDir(j.candidate.workspace, filepath.Dir(j.candidate.upper), j.binds)
	case j.readWS != "":
		return s.admitGitDir(j.readWS, "", j.binds)
	}
	return nil, nil
}
