// Package redact removes credentials from text before it leaves coagent8
// (R-047–R-055, seed 000 §3).
//
// # Profiles
//
// [Answer] replaces recognised credential formats only — OpenAI and
// Anthropic sk- keys, Stripe, GitHub, GitLab, Google ya29., npm, Hugging
// Face, Slack, bare JWTs, AWS access key IDs, PEM private keys, Bearer
// tokens and the provider gate's own phantom credentials (c8g_) — so model answers stay byte-identical otherwise: code such as
// `const token = getToken();` is never rewritten.
//
// [Diagnostic] adds keyword assignments with an explicit '=' or ':' and a
// literal value, HTTP Basic credentials, URL userinfo passwords, and the
// home directory rewritten to "~" at a path boundary. Use it
// for stderr, errors, logs, doctor output and issue reports.
//
// A secret is replaced by "[REDACTED:<kind>]" ([Kind.Marker]); no character
// of it is kept.
//
// # Streaming
//
// [Redactor.Writer] returns a writer whose output equals [Redactor.String]
// of everything written, however the input is chunked. It holds
// back only what could still become a secret — at most [MaxHold] bytes —
// and emits whole UTF-8 characters. Close ends the input: a trailing token
// cut short (max_tokens, cancel) is still replaced if it starts with a known
// anchor and has at least eight token characters.
//
// # Truncation
//
// [Redactor.Bound] redacts and only then cuts, so truncation never sees a
// credential prefix. Never slice raw text that leaves the process.
//
// # Non-goals
//
// Detection is by format and syntax, not entropy: a secret with no known
// shape in an answer is not found. The package never decodes base64 or
// percent-encoding to look inside.
package redact
