// Package lineage tells which labelled workspace files influenced a request
// body (issue 10 scope 2; seed 001 "Portal Privatization and Egress": the
// gate must know what a transmission was derived from).
//
// # How
//
// Text is normalized — JSON string contents decoded (request bodies), every
// whitespace character dropped, and a "cat -n"-style line-number prefix
// ("   12\t" or "   12→", as the coding CLIs' file-read tools print it)
// removed — and then fingerprinted with winnowing (Schleiden, Wilkerson,
// Aiken, SIGMOD 2003): rolling hashes of every [K]-byte substring of a
// labelled file, of which the minimum of each window of [W] consecutive
// hashes is kept. A body is scanned by looking up every one of its k-gram
// hashes (behind a bloom prefilter), so any shared normalized substring of
// at least K+W-1 bytes ([Guarantee]) contains a file fingerprint and is
// found. Files shorter than that after
// normalization are matched by exact substring search instead.
//
// In a JSON body each string value is its own segment: no k-gram crosses
// a string boundary, so a match always lies inside one string, and a span
// reported for replacement never cuts JSON structure or an escape.
//
// # Non-goals
//
// Lineage detects copies, not paraphrases: a model restating a labelled
// file in other words, translating it, or encoding it (base64, hex) is not
// found. Shared boilerplate (a license header) in a labelled file makes
// every body containing it match — conservative, never permissive. A
// labelled file that cannot be read or fingerprinted makes the whole
// index unknown ([ErrUnknown]); callers refuse whenever policy depends on
// lineage.
package lineage
