// Package consent asks the user, through an MCP elicitation that coagent8
// itself sends, whether a model that policy marked "ask" may run for one
// turn (seed 000 §2 invariant; ).
//
// # Flow
//
// Every governed turn (package governor) asks its surface's
// governor.Consent before any backend session: an MCP tool call's is
// [Gate.Elicitation], which calls [Gate.Check]; the terminal's is
// [Gate.Refusal], which refuses as in step 1 below. Check passes allow
// decisions and makes deny decisions POLICY_DENIED. For "ask":
//
//  1. No elicitation capability (form mode) → POLICY_DENIED
//     consent.unsupported_client, without sending anything.
//  2. Protocol ≥ 2026-07-28: Check returns a CallToolResult whose
//     InputRequests carry the form and a signed RequestState; the handler
//     must return it unchanged. The client retries the call with
//     InputResponses; Check then verifies the state (same backend and model,
//     same call — tool and arguments — and same question text, not
//     expired, not replayed) and reads the answer.
//  3. Older protocols: Check sends elicitation/create itself
//     ((*mcp.ServerSession).Elicit) with a time-out, so time-outs, transport
//     errors and answers the SDK rejects become POLICY_DENIED with their own
//     reasons (the SDK's automatic fallback would turn them into protocol
//     errors without a reason or a security event).
//
// The other questions of the MCP surface (delegate's job question,
// request_admission's form) use the same flow through [Gate.AskBound] and
// [Gate.AnswerBound]: their signed, single-use state is bound to the
// question's key and to a digest of everything the answer approves, so a
// retry with other arguments, or for another question, is refused
// consent.invalid_state.
//
// Nothing acts before the answer: the first pass of the multi-round-trip
// flow has no side effect, and the remember write happens only after an
// accepted answer.
//
// # What counts as consent
//
// Only action "accept" whose content has approve equal to the JSON boolean
// true. "remember" (a boolean, only offered for unpriced or
// approximately priced models) adds the id to governance.models.allow
// . Every refusal records exactly one security event with the
// backend, model, rule and reason — never prompt text.
//
// # Who answered
//
// A decline or cancel is worded as the user's only when a person could
// have given it: one that arrives within [HumanFloor] of the question is
// the host's own (codex exec declines every elicitation at once; hosts
// that cannot show a form cancel it unseen), and its message says the host
// answered, not the user (issue 19 items 15, 16). The reason stays
// consent.declined or consent.cancelled; the details answered_by ("host"
// or "user") and answer_ms carry the measurement.
//
// # Security model
//
// The calling agent cannot grant consent: no tool argument is read here,
// the request state is HMAC-signed with a per-process key and bound to the
// concrete model, to the call that asked and to the question shown, and an
// answer is accepted once. The trust anchor is the
// MCP client (host), which shows the form to the user.
package consent
