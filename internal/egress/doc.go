// Package egress settles an egress decision for every transmission that
// leaves through the provider gate, before its first byte (issue 10;
// requirements §1.14–§1.16, §1.18; seed 001 "Portal Privatization and
// Egress" through "Thresholds and refusal").
//
// # Decision
//
// [Decider.Seal] classifies the exact request body — lineage of labelled
// workspace files (internal/egress/lineage), credential formats
// (internal/redact), content patterns — against the user's [Policy]:
//
//   - a non-declassifiable category (credentials always) at any weight,
//     a weight at or above forbidden_threshold, unknown lineage where a
//     path label exists, a purpose without a configured capacity, or a
//     target kind not implemented: refused;
//   - a weight at or above portal_threshold: the privacy filter replaces
//     the labelled spans and credentials with placeholders, records a
//     receipt chain and verifies the candidate; a failed or expired filter
//     refuses;
//   - below portal_threshold: the exact bytes are eligible raw.
//
// The resulting [Decision] binds principal and job digests, transmission
// generation, purpose, target digest, wire digest, influence digest,
// policy revision, basis, expiry and the remaining budget. It is verified
// against the bytes, target, purpose, policy and clock at send time and
// then consumes one use and the full byte size of the purpose's durable
// account (internal/egress/ledger) — every transmission, a retry
// included. A decision is single-use. [Decider.SealJoint] makes that
// claim inside a caller's write transaction on the same database, so the
// provider gate's budget reservation and the disclosure claim commit or
// roll back together (issue 9): a request the gate then refuses consumes
// no disclosure capacity, and an admitted one costs one transaction.
//
// # Refusal records
//
// Every refused transmission is refused, with its reason; its event and
// ledger record are limited per job and purpose (a burst of 100, then one
// a second), the count left out carried by the job's next recorded
// refusal and summarised by [Decider.FlushRefusals]
// ([ReasonRefusalsSuppressed]). A job's first refusal that can raise a
// containment signal is always recorded. See refusallimit.go.
//
// # Custody
//
// A Decision is restricted local evidence: it has no exported fields,
// refuses JSON and text marshaling and prints only an opaque id. Events,
// ledger records and `coagent8 audit` carry it as EvidenceDigest@1
// (internal/evidence) only.
//
// # Non-goals
//
// Not claimed (R-191, N-11): anonymity from per-call filtering,
// resistance to semantic re-identification, detection of paraphrased or
// encoded copies, or a general egress gate beyond the provider gate. The
// cumulative accounting is a ceiling on uses and bytes per purpose, not a
// measure of what a series of filtered payloads reveals together.
package egress
