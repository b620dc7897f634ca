// Package evidence computes EvidenceDigest@1, the only form in which
// coagent8 exports, logs or shows a reference to restricted local evidence
// such as an egress decision (requirements R-150–R-153, seed 001 "Decision
// identity and local custody").
//
// # Why keyed
//
// A plain hash of a short prompt, filename or identifier is a dictionary
// and linkage oracle: anyone holding the log can hash guesses and compare.
// EvidenceDigest@1 is HMAC-SHA-256 under a deployment-local 32-byte key
// that never leaves the machine (file mode 0600), over a domain-separated
// encoding of consumer, purpose, record class, key epoch and the input.
// The same input therefore digests differently per consumer, purpose,
// class and epoch, and not at all without the key.
//
// # Non-goals
//
// EvidenceDigest@1 makes no claim to anonymize its input: whoever
// holds the key can test guesses, and equal inputs in one domain still
// link. Callers must not feed it raw low-entropy metadata they could
// avoid; the canonical raw digests it is computed over stay local.
package evidence
