// Package gitrepo runs git plumbing for the delegate job's quarantine and
// admission (issue 16): a fixed environment, no pager, no hooks, no
// fsmonitor, and scratch state (object directory, index) that never lives in
// the user's repository.
//
// # Security model
//
// No GIT_* variable of coagent8's own environment reaches git; the only
// GIT_* variables set are the ones [Repo.Scratch] chooses. A scratch area
// reads the user's objects through GIT_ALTERNATE_OBJECT_DIRECTORIES and
// writes new objects and its index into its own directory, so building or
// checking a candidate writes nothing into the user's .git.
package gitrepo
