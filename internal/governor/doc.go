// Package governor is the one governed path of a model action. Every turn
// coagent8 runs for a caller — a consult, a review with the user's checks,
// the deprecated consult aliases — goes through [Governor.Run] (or
// [Governor.Review], which wraps it), and every delegate job through
// [Governor.Delegate] (the same routing, model resolution and policy,
// plus a job question through [JobConsent]), whichever surface
// asked: the MCP tools and the terminal commands only translate arguments
// into a [Turn] and render the result (seed 000 §2; issue 16 §0).
//
// # Path
//
// Backend routing ([turn.ResolveBackend]) → [turn.Runner.Precheck] (no
// process) → the configuration, re-read on every run so edits and
// "remember" apply → routing.allowedBackends → the concrete model, from
// metadata-only probes cached for ten minutes (AUD-P1-4) → [policy.Decide]
// → for "ask", the backend's login (a backend that says it is not logged
// in is AUTH_REQUIRED before any question) and the surface's [Consent],
// whose refusal names `coagent8 governance allow MODEL` → [turn.Runner.Run] with the
// approved model pinned: a backend that reports another model is refused
//
//
// # Non-goals
//
// The package speaks no protocol. Argument decoding, progress
// notifications and result rendering stay in mcpserver and cli, and how
// the user is asked is the surface's [Consent]: MCP elicitation in package
// consent, a refusal in a terminal, which cannot ask.
//
// # Security model
//
// Fail closed: a governance section that does not parse, a backend outside
// routing.allowedBackends, an unresolved model, a deny decision or a
// refused or missing consent stop the run before any backend session or
// prompt. Each such refusal is a POLICY_DENIED *fault.Error (INVALID_INPUT
// for a malformed model id) and exactly one security event: the ones
// raised here are recorded in [Options.Events], consent refusals by the
// Consent. Consent comes only from the Consent the surface supplies, never
// from a field of the request.
package governor
