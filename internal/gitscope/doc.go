// Package gitscope collects the Git changes a review covers: the snapshot
// text a reviewer sees, the commit it was taken at, and notes on everything
// left out (contract.md §4).
//
// # Security model
//
// The workspace is untrusted: its .git/config and .gitattributes may name
// commands. Git is run without a shell, with an explicit environment (no
// inherited GIT_* variable can redirect it; GIT_CONFIG_NOSYSTEM=1,
// GIT_TERMINAL_PROMPT=0, GIT_OPTIONAL_LOCKS=0 so reads never rewrite the
// index), and with every command-running setting overridden: core.fsmonitor
// off, --no-ext-diff, --no-textconv, filter drivers emptied by name,
// signature display off and all transports refused (no lazy fetch in
// partial clones). Refs are validated before they reach argv.
//
// Untracked files are read only if they are regular files inside the
// workspace by realpath and at most 256 KiB; binary files are listed, never
// inlined. Excluded paths (build output, source maps, lock files) are listed
// by name so a stale bundle cannot hide (AUD-P1-10).
//
// # Limits
//
// Each git command gets 15 s and 4 MiB of output; the snapshot is bounded
// to 3 MiB. Every cut is marked in the text with the contract's wording.
package gitscope
