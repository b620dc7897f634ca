package gitscope

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/coagent8/coagent8/internal/fault"
)

// Kind is the kind of review scope.
type Kind string

// Scope kinds (contract.md §4).
const (
	// Auto is the default: changes since the merge base with the default
	// branch (else HEAD), plus staged, unstaged and untracked changes.
	Auto Kind = "auto"
	// Uncommitted is staged + unstaged + untracked changes against HEAD.
	Uncommitted Kind = "uncommitted"
	// Staged is the index against HEAD.
	Staged Kind = "staged"
	// Range is "git diff <a>..<b>".
	Range Kind = "range"
	// Commit is "git show <rev>".
	Commit Kind = "commit"
	// Branch is "git diff <branch>...HEAD".
	Branch Kind = "branch"
)

// Scope is a parsed review scope. Ref is set for Range, Commit and Branch.
type Scope struct {
	Kind Kind
	Ref  string
}

var (
	hexRE     = regexp.MustCompile(`^[0-9a-fA-F]{7,40}$`)
	headRelRE = regexp.MustCompile(`^HEAD([~^][0-9]*)+$`)
)

// ParseScope reads a review scope as the review tool's `scope` argument
// gives it: "" (Auto); uncommitted|working|all; staged|cached|index; a range
// containing ".." (optional "range:" or "compare:" prefix); 7–40 hex,
// "commit:<rev>", HEAD~N or HEAD^…; else a branch (optional "base:" or
// "branch:" prefix; "base:" alone means the default branch). Errors are
// INVALID_INPUT.
func ParseScope(s string) (Scope, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return Scope{Kind: Auto}, nil
	case "uncommitted", "working", "all":
		return Scope{Kind: Uncommitted}, nil
	case "staged", "cached", "index":
		return Scope{Kind: Staged}, nil
	case "base:", "branch:":
		return Scope{Kind: Auto}, nil
	}
	sc := classify(s)
	return sc, ValidRef(sc.Ref)
}

func classify(s string) Scope {
	for _, p := range []string{"range:", "compare:"} {
		if rest, ok := cutPrefixFold(s, p); ok {
			return Scope{Kind: Range, Ref: rest}
		}
	}
	if rest, ok := cutPrefixFold(s, "commit:"); ok {
		return Scope{Kind: Commit, Ref: rest}
	}
	for _, p := range []string{"base:", "branch:"} {
		if rest, ok := cutPrefixFold(s, p); ok {
			return Scope{Kind: Branch, Ref: rest}
		}
	}
	switch {
	case strings.Contains(s, ".."):
		return Scope{Kind: Range, Ref: s}
	case hexRE.MatchString(s), headRelRE.MatchString(s):
		return Scope{Kind: Commit, Ref: s}
	}
	return Scope{Kind: Branch, Ref: s}
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// ValidRef returns INVALID_INPUT unless ref is non-empty, does not start
// with '-' (it would be read as an option) and contains no whitespace or
// any of ;`$|<>&"' or NUL (contract.md §4).
func ValidRef(ref string) error {
	switch {
	case ref == "":
		return fault.New(fault.InvalidInput, "git.ref_empty", "The review scope names an empty Git ref.")
	case strings.HasPrefix(ref, "-"):
		return fault.New(fault.InvalidInput, "git.ref_invalid", "A Git ref must not start with '-'.")
	case strings.ContainsFunc(ref, badRefRune):
		return fault.New(fault.InvalidInput, "git.ref_invalid",
			"A Git ref must not contain whitespace or any of ;`$|<>&\"' or NUL.")
	}
	return nil
}

func badRefRune(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune(";`$|<>&\"'\x00", r)
}
