// Package gate is the provider gate: the only door from a coding CLI to a
// model provider (requirements §1.13, R-121–R-128; notes/gate.md).
//
// A CLI is pointed at the gate as its provider base URL and holds only a
// phantom credential. For every request the gate
//
//  1. answers Claude Code's HEAD /api/hello probe locally;
//  2. matches method and parsed path against a fixed per-provider route
//     list ([Route]); refuses WebSocket upgrades, oversized header
//     blocks, repeated or malformed credential headers and malformed
//     allowlisted headers (a request net/http itself refuses before this
//     handler runs is counted and recorded, its answer given the reason,
//     when the listener is served with [Gate.Serve]);
//  3. maps the phantom credential (x-api-key or Authorization: Bearer) to a
//     grant through a keyed hash and a constant-time compare;
//  4. checks provider and exact model in the body, and has the body's
//     egress decision settled ([Options.Egress], required: internal/egress
//     classifies, filters or refuses it and consumes disclosure capacity);
//  5. atomically — one conditional SQLite UPDATE — checks that the grant
//     is live, unexpired and has request, token and spend budget for the
//     worst case of this request, reserving it. With [egress.Decider] the
//     disclosure claim of step 4 and this reservation are one write
//     transaction: a refusal by either consumes nothing of both;
//  6. only then resolves the real credential — the reference declared
//     for the grant's provider in [Options.Credentials] (config.json
//     gate.credentials; any other is refused, R-101) — and builds the
//     upstream request itself: fixed origin,
//     admitted path and query, the decided body, the real credential and
//     only the client headers on the route's allowlist ([Route.Headers]);
//     every other header is dropped. The egress decision of step 4
//     binds the digest of that complete request (method, target,
//     forwarded headers, body) and decides the forwarded header values
//     like the body (issue 18 scope 1);
//  7. meters the streamed usage (Anthropic message_start/message_delta,
//     OpenAI response.completed) and settles the reservation with it.
//     Each reservation is one transmission attempt ([Attempt]: decided,
//     completed, not_sent, uncertain; issue 18 scope 4) naming its own
//     egress decision; an attempt lost after its first byte is charged in
//     full unless the provider's usage arrived.
//
// # Security model
//
// Default deny: an unknown route, provider, credential or model is refused
// with a reason, and every decision — admit or deny — is an [event.Event].
// Settlement never refunds below the provider's usage: a stream without a
// usage report, cut by revocation or expiry, or abandoned by the client
// past the drain limit is charged its full reservation. Upstream error
// bodies never reach the client, nor does a redirect (a 3xx is answered
// as an upstream error); a diagnostic-redacted copy (with the real
// credential removed literally as well) goes to the event log. Every
// byte that does go back — headers, whole bodies, each SSE line, trailers
// — is checked first for the grant's real credential and the answer
// profile's credential formats; a match withholds it (guard.go, issue 18
// scope 2). The check reads what the client reads: header and trailer
// names also lower-cased, a whole JSON body and a multi-line SSE event
// also decoded, delta text joined per content block as the client joins
// it (deltas.go), and a whole body also read as SSE, since the SDKs
// choose their reader from the request rather than the Content-Type. What the gate cannot read as every client does is
// withheld, never passed: a success body in a Content-Encoding, an SSE
// stream with a lone CR line ending, delta text whose block index is not
// a plain non-negative integer; 1xx informational responses are not
// forwarded at all.
//
// What leaves is bounded to what the decision names: only tools the client
// runs are admitted, never one the provider would run and that would carry
// the model's text further (tools.go, request.hosted_tool), nor content
// the provider would fetch from a URL (fetch.go, request.provider_fetch),
// nor content it stores and would add beyond the body and its reservation
// (fetch.go, request.provider_state); a body the
// privacy filter rewrote must still name the bound model and output limit
// (egress.filter_binding); a body that stops arriving is refused after
// [Options.BodyTimeout] (request.body_timeout).
//
// Containment (contain.go, issue 18 scope 6): a live phantom on an
// unadmitted route, a credential in a request, or a phantom presented to
// another job's gate or [Gate.ForJob] handler revokes every grant of the job ([Gate.RevokeJob])
// and records a [TypeCompromise] event.
//
// The gate listens on loopback unless given a TLS configuration, and
// forwards only to HTTPS origins unless [Options.UnsafeAllowLoopbackUpstream]
// is set (tests and benchmarks only).
//
// # Non-goals
//
// The gate does not count tokens itself: the reservation bounds input by
// the request's byte length (a token is at least one byte for the
// providers' tokenizers on text) and output by max_tokens or the grant's
// output ceiling. It is not a general proxy and never follows redirects.
//
// # Performance
//
// One write transaction per admission, on a pinned writer connection
// behind a mutex, with prepared statements; a settlement is carried by
// the next write transaction (an admission's, before its budget check)
// or, after at most 2 ms, by its own, grouped with the other queued ones;
// WAL checkpoints run in the background (see writer.go). Numbers and
// the command are in docs/PERFORMANCE.md, "Provider gate".
package gate
