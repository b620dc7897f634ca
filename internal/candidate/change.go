package candidate

import (
	"fmt"
	"io/fs"
)

// Kind says how a path differs between the merged view and lower.
type Kind uint8

// The kinds of a [Change].
const (
	// Added: the path exists in the merged view and not in lower.
	Added Kind = iota + 1
	// Modified: the path exists in both and its content, mode, symlink
	// target or file type differs.
	Modified
	// Deleted: the path exists in lower and not in the merged view.
	Deleted
)

// String returns "added", "modified" or "deleted"; it panics on any other
// value, which only a bug can produce.
func (k Kind) String() string {
	switch k {
	case Added:
		return "added"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	}
	panic(fmt.Sprintf("candidate: unknown Kind %d", uint8(k)))
}

// Change is one changed path of a candidate workspace.
type Change struct {
	// Path is slash-separated and relative to the workspace root, e.g.
	// "pkg/a.go"; it never starts with "/" or "./" and is unique in a
	// result.
	Path string
	// Kind says whether the path was added, modified or deleted.
	Kind Kind
	// Mode is the type and permission bits in the merged view; for a
	// Deleted path it is the mode the path had in lower.
	Mode fs.FileMode
	// OldMode is the mode in lower for Modified and Deleted, zero for Added.
	// A Modified change whose Mode and OldMode differ in type is a type
	// change (file, directory or symlink replaced by another type).
	OldMode fs.FileMode
	// Target is the symlink target when Mode is a symlink, else "".
	Target string
}

// Limits bound a walk. A zero field takes its default.
type Limits struct {
	// MaxEntries bounds the directory entries read from upper and lower
	// together (default [DefaultMaxEntries]).
	MaxEntries int
	// MaxDepth bounds the directory nesting below the roots (default
	// [DefaultMaxDepth]).
	MaxDepth int
}

// Default limits of [Changes]. Issue 15 sizes workspaces at 100,000 files;
// a walk only reads upper plus the lower subtrees that upper deletes or
// replaces, so the entry bound is a guard, not a workspace size.
const (
	DefaultMaxEntries = 1_000_000
	DefaultMaxDepth   = 256
)

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// Changes returns the changed-file set of an overlayfs upper directory
// written in userxattr mode, compared with its lower directory, sorted by
// Path in byte order, within the default [Limits]. See [ChangesLimited].
func Changes(lower, upper string) ([]Change, error) {
	return ChangesLimited(lower, upper, Limits{})
}
