// Package candidate is groundwork for the `candidate` profile of issue 15
// (scope 1): a disposable copy-on-write copy of the workspace that only the
// delegated agent writes. The copy is an overlayfs mount made in the job's
// user namespace with `-o userxattr` (../shared/notes/delegation.md §6); its
// cost is O(changed files) because only the upper directory receives data.
//
// This package reads such an upper directory back: [Changes] compares it with
// its lower directory and returns the changed-file set. No command uses it
// yet.
//
// # Overlay encoding read here
//
//   - a regular file, directory or symlink in upper replaces the lower entry
//     of the same path (a modification or chmod copies the file up in full);
//   - a whiteout, a character device 0:0, deletes the lower entry and, for a
//     directory, its whole subtree;
//   - a directory with user.overlay.opaque = "y" hides everything below it
//     in lower;
//   - a directory rename fails with EXDEV (redirect_dir=nofollow), so `mv`
//     copies and deletes; a file rename is a full copy plus a whiteout.
//
// Renames are therefore never inferred: a rename is a deletion of the old
// path and an addition of the new one, and a caller that wants rename
// detection does it by content, as git does.
//
// # Security model
//
// The upper directory is written by an untrusted agent. The walk never
// follows a symbolic link (every component below the two roots is opened
// with openat(2) and O_NOFOLLOW, and an opened entry must be the one that
// was stat'ed), refuses special files other than whiteouts, refuses overlay
// features it does not interpret (redirects, metacopy, unknown opaque
// values), and is bounded in entries and depth. The lower directory must not
// change during the walk (overlayfs requires the same while mounted), so it
// should be a snapshot, not the user's live checkout.
package candidate
