// Package jsonrpc is a small JSON-RPC 2.0 client over newline-delimited
// stdio, as spoken by `codex app-server` (notes/backends.md §1.1).
//
// One [Conn] owns one reader goroutine. Responses are matched to [Conn.Call]
// by id; notifications and server→client requests are handed to the
// [Handler] in arrival order on that goroutine, so a handler sees a turn's
// events in the order the server sent them. Every server→client request
// gets exactly one answer: the handler's result, or a JSON-RPC error when
// the handler declines (an unanswered request would hang the turn).
//
// # Non-goals
//
// No batching, no client-side request handling beyond the Handler, no
// reconnection: the peer is a child process that lives for one turn.
//
// # Limits
//
// Records are read through a bounded decoder ([jsonl.Reader]): a record
// over its limit arrives reduced, and only a notification is ever handled
// from a reduction (the Handler is told how it was cut); a reduced response
// fails its call with [*RecordLimitError] and a reduced request is refused
// unread. Each call has its own timeout through its context.
package jsonrpc
