// Package review builds code-review prompts and enforces the review verdict:
// the State Envelope gate of contract.md §3.
//
// A backend's answer is untrusted text. [Gate] parses it, extracts the
// structured findings and decides READY or BLOCKED by rules the model cannot
// talk its way around: any "[P1]" or "[P2]" anywhere (quoted prose too), a
// partial coverage, a truncated answer, or a missing, duplicated or
// malformed envelope header all force BLOCKED. Only a complete envelope with
// no blocker whose own verdict is READY passes.
//
// # Structured verdict
//
// [Envelope] is the structured form (verdict, summary, findings, next steps,
// coverage, snapshot, checks). It is a superset of the review schema of
// openai/codex-plugin-cc (peers.md): verdict ↔ READY/BLOCKED, summary,
// findings[] with severity, title, file, line/line_end (line_start,
// line_end), confidence, problem+evidence (body) and fix (recommendation),
// and next_steps[]. [Schema] returns it as a JSON Schema that Codex
// outputSchema (strict mode: every property required, optional ones
// nullable) and Claude --json-schema can enforce. A JSON answer that meets
// the schema is rendered to envelope text and gated by the same rules.
//
// # Non-goals
//
// The gate does not judge whether findings are correct, and it never invents
// data: an empty answer is an error, fields the model did not give stay
// empty.
package review
