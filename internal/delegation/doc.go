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
// # Non-goals
//
// The user-facing delegate tool, admission of the candidate's changes and
// Codex are not here yet (issue 15 points 3–8 and the next issue).
package delegation
