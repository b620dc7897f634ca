package quarantine

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
)

// UncommittedBase prefixes the stored base of a delegate job that started
// from the working tree (base `uncommitted`): "uncommitted:" + the id of
// the tree [SnapshotBase] wrote.
const UncommittedBase = "uncommitted:"

// BaseObjects is the object directory of the `uncommitted` base of the
// job whose directory (state dir/jobs/<id>) is jobDir: [SnapshotBase]'s
// directory is renamed to jobDir/base. Admission reads it for the
// three-way apply, whose preimages (the user's uncommitted bytes) are in
// no object of the repository.
func BaseObjects(jobDir string) string { return filepath.Join(jobDir, "base", "objects") }

// SplitBase returns the tree or commit a stored base names and, for an
// `uncommitted` base, the object directory it was written to (jobDir as
// for [BaseObjects]); for a commit, objects is nil.
func SplitBase(base, jobDir string) (rev string, objects []string) {
	if t, ok := strings.CutPrefix(base, UncommittedBase); ok {
		return t, []string{BaseObjects(jobDir)}
	}
	return base, nil
}

// SnapshotBase writes the working tree's current state as a tree into a
// new directory below parent and returns the directory (objects/ holds
// the tree and the blobs the repository lacks) and the tree id. The
// state is what `git add --all` would stage: tracked files as they are
// in the work tree (uncommitted edits and deletions included) plus
// untracked files that .gitignore does not ignore; ignored files are
// not part of it (the candidate's agent still sees them, as for a HEAD
// base). The user's index, objects and work tree are never written: git
// works on a copy of the index (its stat cache keeps the cost that of
// `git status`; only changed files are hashed) with its own object
// directory. Errors: PROCESS_ERROR quarantine.base_snapshot.
func SnapshotBase(ctx context.Context, repo *gitrepo.Repo, parent string) (dir, tree string, err error) {
	s, err := repo.Scratch(parent)
	if err != nil {
		return "", "", snapshotErr(err)
	}
	tree, err = snapshot(ctx, s)
	_ = os.Remove(filepath.Join(s.Dir, "index"))
	if err != nil {
		s.Close()
		return "", "", snapshotErr(err)
	}
	return s.Dir, tree, nil
}

func snapshot(ctx context.Context, s *gitrepo.Scratch) (string, error) {
	index := filepath.Join(s.Dir, "index")
	if b, err := os.ReadFile(filepath.Join(s.Repo.GitDir, "index")); err == nil && os.WriteFile(index, b, 0o600) == nil {
		if _, err := s.Git(ctx, s.Repo.Top, nil, "add", "--all", "--", "."); err == nil {
			return writeTree(ctx, s)
		}
	}
	// No index, or one the copy cannot use (a split index): start from
	// HEAD (or nothing) and hash what differs.
	_ = os.Remove(index)
	if _, err := s.Git(ctx, "", nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err == nil {
		if _, err := s.Git(ctx, "", nil, "read-tree", "HEAD"); err != nil {
			return "", err
		}
	}
	if _, err := s.Git(ctx, s.Repo.Top, nil, "add", "--all", "--", "."); err != nil {
		return "", err
	}
	return writeTree(ctx, s)
}

func writeTree(ctx context.Context, s *gitrepo.Scratch) (string, error) {
	out, err := s.Git(ctx, "", nil, "write-tree")
	return strings.TrimSpace(string(out)), err
}

func snapshotErr(err error) error {
	return fault.Wrap(fault.ProcessError, "quarantine.base_snapshot", "The working tree's state (base uncommitted) could not be recorded.", err)
}
