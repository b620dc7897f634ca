// Package operator is the local operator dashboard behind `coagent8
// operator` (issue 17; requirements §1.9 R-083–R-094, §1.10 R-095–R-097):
// a small web page on loopback where the person at the machine sees the
// host's sandbox qualification, backends and governance, jobs with their
// gate counters, grants and budgets, egress decisions and refusals,
// security events and the sessions of each workspace, updated live over
// server-sent events.
//
// # Security model
//
// Loopback is not authentication (seed 001, "Decision: trust zones").
// Every request, on every route, passes one chain ([Server.Handler]):
//
//  1. the peer address must be loopback and the Host header exactly the
//     listening address and port (DNS-rebinding defence, R-088), else 421;
//  2. a request bearing a proxy or forwarded-identity header (Forwarded,
//     X-Forwarded-*, X-Real-IP, X-Remote-User, ...) is refused, 403
//     no proxy, tunnel or edge assertion stands in for the
//     credential;
//  3. the dedicated HTTP Basic credential ([Credential], 256 random bits,
//     0600 in the state directory) is compared in constant time; failures
//     are rate-limited and recorded as security events.
//     Every request needs it. It earns a session badge: a cookie
//     (HttpOnly, SameSite=Strict, Path=/, 8 h, named for the port) whose
//     digest the server keeps. The badge alone never authenticates:
//     cookies are not isolated by port, so a browser sends it to every
//     server on 127.0.0.1 it visits, while it keeps the Basic credential
//     per origin. POST /logout ends it;
//  4. an unsafe method needs a same-origin Origin *and* the page's CSRF
//     token: a foreign Origin is refused even with a valid token (R-086,
//     Every action is a plain form (the script only enhances), and
//     under the pages' no-referrer policy a browser posts such a form with
//     "Origin: null": that is accepted only with the browser's own Fetch
//     Metadata for a same-origin navigation, and still needs the token;
//  5. no response ever carries an Access-Control-* header; every
//     response, refusals included, carries a strict Content-Security-Policy
//     (scripts and styles only from this server, which embeds them),
//     X-Frame-Options DENY and Referrer-Policy no-referrer.
//
// There are no exceptions to the chain, for any route. Every value
// a page shows is redacted with the diagnostic profile and then escaped by
// html/template: untrusted bytes (reasons quoting an error, diffs, agent
// text) are data, never markup.
//
// Lifecycle actions (stopping or restarting a coagent8 component) refuse
// with LIFECYCLE_UNAVAILABLE until a qualified lifecycle passage exists
// . The state is only read: the dashboard never migrates or writes
// another component's tables; it writes only its credential and its own
// security events, except through its candidate source (below).
//
// # Non-goals
//
// The credential does not establish remote identity, per-object isolation
// or effect-time revocation, and the dashboard does not claim to be safe
// against a hostile browser or browser extension. Peer access,
// proxies, tunnels and non-loopback listening are refused, with no option
// to widen them.
//
// Candidate admission (the `delegate` job's quarantined patches, issue 16)
// plugs in through [Candidates]; [JobCandidates] is the source over the
// job store and the same admitter as `coagent8 admit`, and the only path
// by which the dashboard writes (the job's row and its checkout). Without
// a source the candidate pages say so and their actions refuse.
package operator
