package gitscope

import (
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

// isHexRev reports whether s matches ^[0-9a-fA-F]{7,40}$ (an abbreviated
// or full commit id). This and [isHeadRel] are checked by hand: a regexp
// in a package variable compiles at every process start (issue 8
// performance); rev_test.go checks the equivalence.
func isHexRev(s string) bool {
	if len(s) < 7 || len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// isHeadRel reports whether s matches ^HEAD([~^][0-9]*)+$ (HEAD~2, HEAD^,
// HEAD^2~1...): after "HEAD", a non-empty run of '~', '^' and digits that
// starts with '~' or '^'.
func isHeadRel(s string) bool {
	rest, ok := strings.CutPrefix(s, "HEAD")
	if !ok || rest == "" || rest[0] != '~' && rest[0] != '^' {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c != '~' && c != '^' && !('0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

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
	case isHexRev(s), isHeadRel(s):
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
