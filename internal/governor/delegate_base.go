package governor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// BaseUncommitted is the delegate base that starts the candidate from the
// working tree as it is (see [DelegateTask.Base]).
const BaseUncommitted = "uncommitted"

// Reasons of a refused base (all INVALID_INPUT; [ReasonBase] for one that
// is not a revision at all, [ReasonDirty] for HEAD over a dirty checkout).
const (
	ReasonBaseUnknown   = "delegate.base_unknown"
	ReasonBaseNotCommit = "delegate.base_not_commit"
	ReasonBaseNotHead   = "delegate.base_not_head"
)

// maxBaseBytes bounds the base argument (a revision, not a program).
const maxBaseBytes = 256

// baseRef is a resolved delegate base: rev is [BaseUncommitted] or a
// commit id; head is set when rev is a commit other than the checkout's
// HEAD (that HEAD's id): the candidate's upper layer is then seeded with
// rev's difference from it (quarantine.SeedBase).
type baseRef struct {
	rev, head string
}

// delegateBase resolves the caller's base in workspace ws: "uncommitted",
// HEAD's commit, or another commit. The candidate is an overlay whose
// lower layer is the checkout itself (nothing copied: the 50 ms candidate
// target of issue 15), so a commit base needs a checkout whose tracked
// files are HEAD's; a commit other than HEAD is put in the upper layer as
// its difference from HEAD, which needs the workspace's .git to be a
// directory (a linked worktree's or submodule's git directory is
// projected from elsewhere): INVALID_INPUT delegate.base_not_head
// otherwise.
func (g *Governor) delegateBase(ctx context.Context, ws, base string) (baseRef, error) {
	repo, err := gitrepo.Open(ctx, g.env, ws)
	if err != nil {
		return baseRef{}, err
	}
	if base == BaseUncommitted {
		return baseRef{rev: BaseUncommitted}, nil
	}
	if !revText(base) {
		return baseRef{}, fault.New(fault.InvalidInput, ReasonBase, `base must be "HEAD" (the default), a commit, or "uncommitted"`)
	}
	rev := ""
	if base != "" && base != "HEAD" {
		if rev, err = resolveCommit(ctx, repo, base); err != nil {
			if _, herr := repoHead(ctx, repo); herr != nil {
				return baseRef{}, herr // no commit at all: the real cause
			}
			return baseRef{}, err
		}
	}
	return placeBase(ctx, repo, base, rev)
}

// placeBase checks commit rev ("" = HEAD's) against the checkout as it is
// now and says how the candidate starts from it: the checkout's tracked
// files must be HEAD's (delegate.workspace_dirty), and a commit other
// than HEAD is seeded (head set), which needs the workspace's .git to be
// a directory (delegate.base_not_head) and a seedable difference
// ([quarantine.CheckSeed]). base is the caller's text, for messages.
// Called when the base is resolved and again just before the job starts
// ([Governor.restateBase]): the user may commit or edit while the job
// question is open.
func placeBase(ctx context.Context, repo *gitrepo.Repo, base, rev string) (baseRef, error) {
	h, err := repoHead(ctx, repo)
	if err != nil {
		return baseRef{}, err
	}
	ref := baseRef{rev: h.commit}
	if rev != "" {
		ref.rev = rev
	}
	if h.dirty {
		return baseRef{}, fault.New(fault.InvalidInput, ReasonDirty, "the workspace has uncommitted changes to tracked files and the candidate sees the checkout as it is: "+
			`delegate with base "uncommitted" (the patch is then relative to your working tree), or commit or stash them to delegate from a commit`)
	}
	if ref.rev == h.commit {
		return ref, nil
	}
	if base == "" {
		base = "HEAD"
	}
	if st, err := os.Lstat(filepath.Join(repo.Top, ".git")); err != nil || !st.IsDir() {
		return baseRef{}, fault.New(fault.InvalidInput, ReasonBaseNotHead, "base "+base+" is commit "+ref.rev[:12]+", not the checkout's HEAD "+h.commit[:12]+
			", and this workspace is a linked worktree or submodule checkout, whose candidate starts from HEAD only: "+
			"delegate from HEAD, or check that commit out and delegate there").With("head", h.commit).With("base", ref.rev)
	}
	if err := quarantine.CheckSeed(ctx, repo, h.commit, ref.rev); err != nil {
		return baseRef{}, err
	}
	ref.head = h.commit
	return ref, nil
}

// restateBase places the resolved base again against the checkout as it
// is when the job starts: the job question may have been open for
// minutes, and a commit made meanwhile moved the candidate's lower layer
// (the checkout), so a seed computed from the HEAD of the question would
// show neither the base nor HEAD. The commit stays the one resolved (and
// approved); only its placement follows the checkout: a base that was
// HEAD and no longer is becomes a seeded base, a seeded base whose
// commit is now HEAD needs no seed. Errors as [placeBase]'s.
func (g *Governor) restateBase(ctx context.Context, ws string, base baseRef) (baseRef, error) {
	if base.rev == BaseUncommitted {
		return base, nil
	}
	repo, err := gitrepo.Open(ctx, g.env, ws)
	if err != nil {
		return baseRef{}, err
	}
	return placeBase(ctx, repo, base.rev, base.rev)
}

// revText reports whether s may be given to git as a revision: empty
// (HEAD), at most maxBaseBytes of printable UTF-8, no space and no
// leading '-' (never an option, even after --end-of-options).
func revText(s string) bool {
	if len(s) > maxBaseBytes || !utf8.ValidString(s) || strings.HasPrefix(s, "-") {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}

// resolveCommit returns the commit base names, or INVALID_INPUT
// delegate.base_unknown (no such object) or delegate.base_not_commit
// (it names a tree, blob, or tag of one).
func resolveCommit(ctx context.Context, repo *gitrepo.Repo, base string) (string, error) {
	out, err := repo.Run(ctx, repo.Top, nil, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := repo.Run(ctx, repo.Top, nil, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", base); err == nil {
		return "", fault.New(fault.InvalidInput, ReasonBaseNotCommit, "base "+base+" names a Git object that is not a commit: give HEAD, a commit, or uncommitted").With("base", base)
	}
	return "", fault.New(fault.InvalidInput, ReasonBaseUnknown, "base "+base+" is not a revision of the workspace's repository").With("base", base)
}

type baseHead struct {
	commit string
	dirty  bool
}

// repoHead returns HEAD's commit and whether a tracked file differs
// from it (untracked files do not count: the patch is built from HEAD's
// tree plus the agent's changes only).
func repoHead(ctx context.Context, r *gitrepo.Repo) (baseHead, error) {
	out, err := r.Run(ctx, r.Top, nil, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return baseHead{}, fault.Wrap(fault.InvalidInput, ReasonBase, `the workspace has no commit yet: commit once, or delegate with base "uncommitted"`, err)
	}
	st, err := r.Run(ctx, r.Top, nil, nil, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return baseHead{}, err
	}
	return baseHead{commit: strings.TrimSpace(string(out)), dirty: len(bytes.TrimSpace(st)) > 0}, nil
}

// jobBase is the base a job is created with: a commit id as resolved, or
// for base uncommitted "uncommitted:<tree>" of the working tree's state,
// whose objects are written to a new directory below deps.WorkDir (dir;
// the caller moves it to the job's directory as "base").
func (g *Governor) jobBase(ctx context.Context, deps DelegateDeps, ws string, base baseRef) (stored, dir string, err error) {
	if base.rev != BaseUncommitted {
		return base.rev, "", nil
	}
	repo, err := gitrepo.Open(ctx, g.env, ws)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(deps.WorkDir, 0o700); err != nil {
		return "", "", fault.Wrap(fault.ProcessError, "delegate.workdir", "the job directory cannot be made", err)
	}
	dir, tree, err := quarantine.SnapshotBase(ctx, repo, deps.WorkDir)
	if err != nil {
		return "", "", err
	}
	return quarantine.UncommittedBase + tree, dir, nil
}

// seedCandidate writes base's difference from the checkout's HEAD into
// the candidate directory dir as its upper layer (nil, nil when base is
// HEAD or uncommitted: nothing to seed).
func (g *Governor) seedCandidate(ctx context.Context, ws string, base baseRef, dir string) (*quarantine.Seed, error) {
	if base.head == "" {
		return nil, nil
	}
	repo, err := gitrepo.Open(ctx, g.env, ws)
	if err != nil {
		return nil, err
	}
	return quarantine.SeedBase(ctx, repo, base.head, base.rev, filepath.Join(dir, "upper"))
}

// candidateBase is the revision and extra object directories job j's
// candidate is built against ([quarantine.SplitBase]).
func candidateBase(workDir, id, base string) (string, []string) {
	return quarantine.SplitBase(base, filepath.Join(workDir, id))
}
