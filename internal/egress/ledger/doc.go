// Package ledger is the durable disclosure accounting of egress decisions
// in the embedded database (component "egress"; requirements R-154,
// R-161–R-164, R-190; seed 001 "Offline disclosure-accounting
// qualification", "Thresholds and refusal").
//
// # Accounts
//
// One account per (host, purpose). The host is a random identity minted
// once per database; the purpose is a code-defined constant, never a
// configuration label, so neither a job, attempt or transmission id, nor a
// renamed configuration entry, nor a new policy revision opens a fresh
// account. The first claim of a purpose records its ceilings (uses and
// bytes); from then on a configuration whose ceilings differ is refused
// with [ErrConfigConflict] instead of minting a new account.
//
// # Claims
//
// [Ledger.Claim] consumes one use and the complete byte size in one
// SQLite write transaction, before the first byte is sent: concurrent
// claims never exceed the ceiling. [Ledger.ClaimTx] makes the same claim
// inside a caller's transaction, counted only if that commits. A
// committed claim is never refunded — not on
// refusal later on, expiry, cancellation, an upstream failure or an
// uncertain outcome.
//
// # Evidence
//
// The ledger stores no payload, raw digest, filename or subject: claims
// and decision records carry only EvidenceDigest@1 strings
// (internal/evidence), so `coagent8 audit` can list them.
package ledger
