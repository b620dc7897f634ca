// Package providertest runs local test doubles of the two model-provider
// APIs the pinned coding CLIs speak: the Anthropic Messages API (Claude Code
// 2.1.328) and the OpenAI Responses API (Codex 0.169.0).
//
// Each double is an [httptest.Server] on 127.0.0.1 that answers with
// scripted [Reply] values (text, usage numbers, error status and body, slow
// streaming, streams without a usage report) and records every request it
// received ([Request]: method, path, query, headers, body), so tests can
// assert which credential reached the provider.
//
// # Wire facts
//
// Event names and field names follow what the pinned CLIs consume, verified
// against these doubles (notes/backends.md §1.2, §2; notes/gate.md §3):
//
//   - Anthropic: HEAD /api/hello; POST /v1/messages[?beta=true] streaming
//     message_start, content_block_start, content_block_delta (text_delta),
//     content_block_stop, message_delta (cumulative usage), message_stop, or
//     one JSON message when "stream" is false; POST
//     /v1/messages/count_tokens.
//   - OpenAI Responses: POST /v1/responses streaming response.created,
//     response.output_item.added, response.output_text.delta,
//     response.output_item.done, response.completed (with usage); GET
//     /v1/models.
//
// # Non-goals
//
// The doubles are not faithful provider emulations: no tool calls, no
// thinking blocks, no rate-limit headers. They never contact the network.
package providertest
