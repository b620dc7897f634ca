// Package session is coagent8's durable [turn.Sessions]: opaque session
// handles bound to a canonical workspace and a backend, the backend's
// native thread id for continuation, an exclusive per-session turn lease,
// cancellation from any connection, and the history archive with
// revision-bound pagination (contract.md §6, issue 6).
//
// # Storage
//
// One embedded SQLite database (package store, component "sessions"). A
// turn streams its answer as appended delta chunks (coalesced, redacted
// with the answer profile) and materializes one message at its end, when
// the chunks are replaced by the final redacted answer in one
// transaction. A 1 MiB answer therefore costs about 1 MiB on disk, not
// 54–112× (AUD-P0-3). Per-session and total limits evict the oldest
// messages first; an archive write that fails is a warning and never
// fails or blocks the turn (AUD-P1-3).
//
// # Leases and crash recovery
//
// A lease is a row owned by a server instance id. Each [Store] holds an
// exclusive OS file lock (flock / LockFileEx) on its own instance lock
// file for its whole life, so the kernel releases it when the process
// dies, however it dies. A lease whose instance's lock can be taken by
// someone else belongs to a dead server: its turn is marked failed with
// reason server_exit and the session is freed. No PID files, no PID
// reuse hazard, no empty-lease window (AUD-P1-9).
//
// # Isolation
//
// Every query is scoped to the caller's canonical workspace: a handle of
// another workspace is indistinguishable from an unknown one
// (SESSION_INVALID, AUD-P1-8).
package session
