// Package jsonl reads the newline-delimited JSON records a backend CLI
// writes on stdout, in bounded memory whatever their size (issue 19 item 6).
//
// # Records and reductions
//
// A record of at most [Limits.Record] bytes is returned verbatim. A longer
// one is never held whole: it is parsed as it streams in and reduced to a
// valid JSON document of about [Limits.Budget] bytes at most, and the
// [Record] says how ([Cut]):
//
//   - [CutStrings]: string values were shortened to [Limits.String]
//     decoded bytes each (at a character boundary, never inside an escape);
//     every member and element is still present.
//   - [CutValues]: the structure changed: members or elements were dropped
//     (budget or depth exhausted), an object key was shortened, or an
//     over-long number was replaced by 0.
//
// A caller that must verify a record (a startup report, a thread policy)
// refuses any reduced record; one that only needs the leading part of a
// text (an answer that is bounded later anyway) accepts [CutStrings] and
// learns from [Clipped] whether its text was the one shortened.
//
// # Security model
//
// The reader trusts nothing it reads. Memory per record is bounded by
// Record + Budget plus a small constant, whatever the line length, depth or
// shape; a malformed record that had to be reduced is a [SyntaxError]
// after its whole line was consumed, so the stream stays in step.
// Non-goal: validating every byte of the parts it drops (the kept parts
// are validated again by the caller's json.Unmarshal).
package jsonl
