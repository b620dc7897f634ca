package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Scratch is a private object directory and index over a [Repo]: git reads
// the user's objects (alternates) and writes only below Dir. Close removes
// Dir. A Scratch is not safe for concurrent use.
type Scratch struct {
	Repo *Repo
	Dir  string
	env  []string
}

// Scratch creates a scratch area in a new directory below parent ("" = the
// system temp directory).
func (r *Repo) Scratch(parent string) (*Scratch, error) { return r.ScratchWith(parent) }

// ScratchWith is [Repo.Scratch] that also reads the objects of the
// object directories alternates (absolute paths), e.g. those a delegate
// job's `uncommitted` base was written to; they are searched after the
// repository's own objects and never written.
func (r *Repo) ScratchWith(parent string, alternates ...string) (*Scratch, error) {
	for _, a := range alternates {
		if !filepath.IsAbs(a) || strings.ContainsRune(a, filepath.ListSeparator) {
			return nil, errors.New("gitrepo: an alternate object directory must be an absolute path without " + string(filepath.ListSeparator))
		}
	}
	dir, err := os.MkdirTemp(parent, "coagent8-git-")
	if err != nil {
		return nil, err
	}
	obj := filepath.Join(dir, "objects")
	if err := os.MkdirAll(filepath.Join(obj, "pack"), 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	env := []string{"GIT_DIR=" + r.GitDir, "GIT_OBJECT_DIRECTORY=" + obj,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + strings.Join(append([]string{filepath.Join(r.CommonDir, "objects")}, alternates...), string(filepath.ListSeparator)),
		"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}
	return &Scratch{Repo: r, Dir: dir, env: env}, nil
}

// Objects returns the scratch object directory.
func (s *Scratch) Objects() string { return filepath.Join(s.Dir, "objects") }

// Git runs git over the scratch area with the work tree worktree ("" = none:
// plumbing on the index and objects only).
func (s *Scratch) Git(ctx context.Context, worktree string, stdin []byte, args ...string) ([]byte, error) {
	env := s.env
	dir := s.Dir
	if worktree != "" {
		env = append(append([]string(nil), env...), "GIT_WORK_TREE="+worktree)
		dir = worktree
	}
	return s.Repo.Run(ctx, dir, env, stdin, args...)
}

// Close removes the scratch directory.
func (s *Scratch) Close() error { return os.RemoveAll(s.Dir) }
