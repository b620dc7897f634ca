// Package verify runs the user's configured checks (config.json
// "verify.commands", e.g. [["go","test","./..."]]) in the task sandbox and
// compares their real outcome with what a reviewing model claimed
// (issue 8 "user-facing payoff").
//
// # Security model
//
// Commands come only from the user's configuration file; nothing a caller
// or a model sends can add, change or select one: [Verifier.Run]
// takes the parsed configuration, and the review tool's only related
// argument is the boolean run_checks. Each command runs in the task
// sandbox (package sandbox) on a copy of the workspace — never the user's
// checkout — with no network, no credentials and limits enforced from
// outside. A sandbox refusal is reported as "not run" with its reason and
// never as a pass. Output tails are redacted with the diagnostic profile
// before they are kept.
//
// # Non-goals
//
// verify does not decide a review's verdict; the review tool does, using
// [Judge]. It does not cache build output between runs: each check starts
// from an empty scratch directory (so Go recompiles the standard library
// packages a test needs; see docs/PERFORMANCE.md "Task sandbox").
package verify
