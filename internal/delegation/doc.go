// Package delegation runs a pinned coding CLI as a delegated agent inside
// the sandbox's candidate profile (issue 15): the CLI sees a copy-on-write
// view of the user's workspace, holds only the phantom credential of one
// gate grant, and reaches nothing but the gate.
//
// # Security model
//
// Everything the CLI is given its commands can read, so it is given only
// what the job needs: its own executable (bound read-only at its canonical
// path and pinned by digest), a job-scoped HOME and configuration
// directory under the sandbox's scratch, an allowlisted environment whose
// only credential is the phantom, and the gate's base URL. The real
// credential stays in the gate ([gate.Gate]); the network boundary is the
// sandbox's ([sandbox.AgentSpec]). The CLI's own startup report is checked
// as it streams and a report that differs from the profile ends the
// run ([Report]).
//
// Codex runs as `codex app-server` over the sandbox's stdio
// ([sandbox.AgentSpec.Stdin]): its native binary is executed directly
// ([ResolveCodexRuntime]; the npm launcher and node stay outside), its
// own sandbox is off because it cannot nest inside this boundary (its
// commands would all fail while its thread still reported
// workspaceWrite), and the thread report verified before the one turn is
// exactly dangerFullAccess, approval never, the grant's model, the gate
// as the only provider, /job/workspace, every MCP server disabled
// ([CodexReport]): a report that is true inside the boundary, whose
// containment is the kernel sandbox around the process.
//
// # Non-goals
//
// Not here yet: the user-facing delegate tool and admission of the
// candidate's changes (the next issue); a snapshot of the workspace as
// the overlay's lower layer.
//
// # Read-only turns
//
// [ReadLauncher] runs a consult or review turn's CLI — the backend's own
// argv and startup-report check, through package adapter's Launcher seam
// — in the sandbox's read profile: the workspace projected read-only, the
// prompt on stdin, the gate the only network, the phantom of a per-turn
// grant in ANTHROPIC_API_KEY or, for Claude Code's subscription login,
// CLAUDE_CODE_OAUTH_TOKEN. It admits only the qualified runtime.
package delegation
