package gitscope

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// Options says what to collect.
type Options struct {
	// Workspace is the absolute workspace directory (inside a Git work tree).
	Workspace string
	// Scope is the review tool's scope argument (see [ParseScope]).
	Scope string
	// Env locates git (PATH) and the user's global Git config (HOME).
	Env config.Env
}

// Snapshot is the collected review scope.
type Snapshot struct {
	Scope Scope
	// Description names the scope for the reviewer, e.g. "uncommitted
	// changes against HEAD".
	Description string
	// Commit is the full sha the snapshot was taken at (HEAD, or the shown
	// commit); "" when the repository has no commit yet.
	Commit string
	// Base is the merge-base sha an Auto scope compared against ("" = HEAD).
	Base string
	// Text is the snapshot for the prompt, valid UTF-8, at most
	// SnapshotBudget bytes plus the budget mark.
	Text string
	// Binary, Excluded and Omitted list paths that are named but not
	// inlined; Omitted entries carry their reason ("x (larger than 256 KiB)").
	Binary, Excluded, Omitted []string
	// Incomplete reports that a git buffer limit or the snapshot budget cut
	// the text (the coverage of a review of it is partial).
	Incomplete bool
}

// Collect runs git in the workspace and returns the snapshot of the scope.
// Errors are *fault.Error: INVALID_INPUT for a bad scope or a workspace that
// is not a Git work tree, CLI_NOT_FOUND without git, TIMEOUT after 15 s for
// one command, PROCESS_ERROR when git fails. A scope naming a ref or commit
// the repository lacks is INVALID_INPUT git.unknown_ref / git.unknown_commit
// naming it (detail "ref").
func Collect(ctx context.Context, o Options) (Snapshot, error) {
	sc, err := ParseScope(o.Scope)
	if err != nil {
		return Snapshot{}, err
	}
	path, _, err := process.Resolve(o.Env, "git")
	if err != nil {
		return Snapshot{}, err
	}
	root, err := filepath.EvalSymlinks(o.Workspace)
	if err != nil {
		return Snapshot{}, fault.Wrap(fault.InvalidInput, "workspace.invalid", "The workspace path does not exist.", err)
	}
	g := newGit(o.Env, path, root)
	if _, _, err := g.run(ctx, "rev-parse", "--is-inside-work-tree"); err != nil {
		if fault.HasCode(err, fault.Timeout) {
			return Snapshot{}, err
		}
		return Snapshot{}, fault.Wrap(fault.InvalidInput, "git.not_a_work_tree",
			"The workspace is not inside a Git work tree; review needs Git.", err)
	}
	if err := g.disableFilters(ctx); err != nil {
		return Snapshot{}, err
	}
	c := &collector{g: g, root: root, snap: Snapshot{Scope: sc}}
	if err := c.collect(ctx); err != nil {
		return Snapshot{}, err
	}
	c.compose()
	return c.snap, nil
}

// section is one titled diff in the snapshot.
type section struct {
	title string
	sub   string   // diff or show
	flags []string // extra flags
	revs  []string // revision arguments (after --end-of-options)
}

type collector struct {
	g        *git
	root     string
	snap     Snapshot
	sections []string
}

func (c *collector) collect(ctx context.Context) error {
	head := c.g.resolve(ctx, "HEAD")
	c.snap.Commit = head
	secs, untracked, err := c.plan(ctx, head)
	if err != nil {
		return err
	}
	for _, s := range secs {
		if err := c.diff(ctx, s); err != nil {
			return err
		}
	}
	if untracked {
		return c.untracked(ctx)
	}
	return nil
}

// plan maps the scope to git commands (contract.md §4).
func (c *collector) plan(ctx context.Context, head string) ([]section, bool, error) {
	sc := c.snap.Scope
	switch sc.Kind {
	case Auto:
		if base := c.g.defaultBase(ctx, head); base != "" && base != head {
			c.snap.Base = base
			c.snap.Description = "changes since the merge base " + base + " with the default branch, plus staged, unstaged and untracked changes"
			committed := section{"Committed changes since the merge base (git diff " + base + " HEAD)", "diff", nil, []string{base, "HEAD"}}
			return append([]section{committed}, working(head)...), true, nil
		}
		fallthrough
	case Uncommitted:
		c.snap.Description = "uncommitted changes (staged, unstaged and untracked) against HEAD"
		return working(head), true, nil
	case Staged:
		c.snap.Description = "staged changes"
		return working(head)[:1], false, nil
	case Range:
		if err := c.knownRange(ctx, sc.Ref); err != nil {
			return nil, false, err
		}
		c.snap.Description = "the range " + sc.Ref
		return []section{{"Changes in " + sc.Ref + " (git diff)", "diff", nil, []string{sc.Ref}}}, false, nil
	case Commit:
		sha := c.g.resolve(ctx, sc.Ref)
		if sha == "" {
			return nil, false, fault.New(fault.InvalidInput, "git.unknown_commit",
				fmt.Sprintf("The review scope names the commit %q, which this repository does not have.", sc.Ref)).With("ref", sc.Ref)
		}
		c.snap.Commit, c.snap.Description = sha, "the commit "+sha
		return []section{{"Commit " + sha + " (git show)", "show", nil, []string{sha}}}, false, nil
	}
	if err := c.known(ctx, sc.Ref); err != nil {
		return nil, false, err
	}
	c.snap.Description = "changes on HEAD since it left " + sc.Ref
	return []section{{"Changes since " + sc.Ref + " (git diff " + sc.Ref + "...HEAD)",
		"diff", nil, []string{sc.Ref + "...HEAD"}}}, false, nil
}

// ReasonUnknownRef is the reason of a range or branch scope naming a ref
// the repository does not have (before issue 19 item 15: git.failed).
const ReasonUnknownRef = "git.unknown_ref"

// known refuses a ref that names no commit here, naming it (detail "ref"),
// before git diff would fail with only git's own stderr as the cause.
func (c *collector) known(ctx context.Context, ref string) error {
	if c.g.resolve(ctx, ref) != "" {
		return nil
	}
	return fault.New(fault.InvalidInput, ReasonUnknownRef, fmt.Sprintf(
		"The review scope names %q, which is not a branch, tag or commit in this repository.", ref)).With("ref", ref)
}

// knownRange checks both ends of A..B or A...B; an empty end is HEAD.
func (c *collector) knownRange(ctx context.Context, r string) error {
	a, b, ok := strings.Cut(r, "...")
	if !ok {
		a, b, _ = strings.Cut(r, "..")
	}
	for _, end := range []string{a, b} {
		if end == "" {
			end = "HEAD"
		}
		if err := c.known(ctx, end); err != nil {
			return err
		}
	}
	return nil
}

// working returns the staged and unstaged sections (staged compares with
// HEAD, or with the empty tree before the first commit).
func working(head string) []section {
	staged := section{"Staged changes (git diff --cached HEAD)", "diff", []string{"--cached"}, []string{"HEAD"}}
	if head == "" {
		staged = section{"Staged changes (git diff --cached)", "diff", []string{"--cached"}, nil}
	}
	return []section{staged, {"Unstaged changes (git diff)", "diff", nil, nil}}
}

// resolve returns the full commit sha of rev, or "" if it names none.
func (g *git) resolve(ctx context.Context, rev string) string {
	out, _, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// defaultBranches are tried in order for the default base.
var defaultBranches = []string{"refs/remotes/origin/HEAD", "refs/remotes/origin/main",
	"refs/remotes/origin/master", "refs/heads/main", "refs/heads/master"}

// defaultBase returns the merge base of HEAD with the default branch, or "".
func (g *git) defaultBase(ctx context.Context, head string) string {
	if head == "" {
		return ""
	}
	for _, ref := range defaultBranches {
		sha := g.resolve(ctx, ref)
		if sha == "" {
			continue
		}
		if out, _, err := g.run(ctx, "merge-base", head, sha); err == nil {
			return strings.TrimSpace(out)
		}
	}
	return ""
}
