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
//
// No git command of this package runs a program that a repository, the
// user's configuration or a candidate names (issue 15 scope 1): hooks
// (core.hooksPath=/dev/null), core.fsmonitor, pager, credential helpers,
// signing and every transport (protocol.allow=never, so no
// core.sshCommand) are off by -c, and a [Repo] lists the effective
// configuration once and sets every filter, diff and merge driver command
// in it to "" (GIT_CONFIG_COUNT; listed lazily by the first command that
// could run one), so a .gitattributes that arrives with a
// patch can select no driver. Decisions: the system configuration is not
// read; the user's global configuration is (identity, object format and
// other settings of the user's own checkout), with its drivers
// neutralized like the repository's, except for a command run outside
// the repository (the admission's fast path), which reads no global
// configuration or global attributes at all (git apply there would run
// the filters they select); git's ownership check
// (safe.directory) stays on, so a checkout owned by another user is
// refused by git, not trusted. A candidate's own git directory (the
// sandbox's git-upper layer) is never opened by this package.
package gitrepo
