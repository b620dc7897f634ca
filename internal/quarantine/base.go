package quarantine

import (
	"context"
	"fmt"
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
// directory. What would be hashed (modified and untracked, not ignored,
// files) is bounded first: more than [MaxSnapshotPaths] paths or
// [MaxSnapshotBytes] is INPUT_LIMIT quarantine.base_too_large, before
// anything is written. Errors: PROCESS_ERROR quarantine.base_snapshot.
func SnapshotBase(ctx context.Context, repo *gitrepo.Repo, parent string) (dir, tree string, err error) {
	s, err := repo.Scratch(parent)
	if err != nil {
		return "", "", snapshotErr(err)
	}
	if err := snapshotSize(ctx, s); err != nil {
		s.Close()
		return "", "", err
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

// Bounds of an `uncommitted` base's snapshot: what differs from the
// index (modified and untracked, not ignored, files).
const (
	MaxSnapshotPaths = 100_000
	MaxSnapshotBytes = 256 << 20
)

// ReasonSnapshotTooLarge refuses a working tree whose uncommitted
// content exceeds the snapshot bounds (INPUT_LIMIT).
const ReasonSnapshotTooLarge = "quarantine.base_too_large"

// snapshotSize lists what the snapshot would hash (one `git ls-files`)
// and refuses it over the bounds: an untracked build directory that
// .gitignore misses would otherwise be hashed into the state directory
// whole.
func snapshotSize(ctx context.Context, s *gitrepo.Scratch) error {
	out, err := s.Repo.Run(ctx, s.Repo.Top, nil, nil, "ls-files", "-z", "--modified", "--others", "--exclude-standard")
	if err != nil {
		return snapshotErr(err)
	}
	var paths int
	var size int64
	for p := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if p == "" {
			continue
		}
		paths++
		if st, err := os.Lstat(filepath.Join(s.Repo.Top, filepath.FromSlash(p))); err == nil && st.Mode().IsRegular() {
			size += st.Size()
		}
		if paths > MaxSnapshotPaths || size > MaxSnapshotBytes {
			return fault.New(fault.InputLimit, ReasonSnapshotTooLarge, fmt.Sprintf(
				"The working tree's uncommitted and untracked files exceed what base uncommitted records (%d paths, %d MiB): "+
					"add build output to .gitignore, commit, or delegate from HEAD.", MaxSnapshotPaths, MaxSnapshotBytes>>20))
		}
	}
	return nil
}
