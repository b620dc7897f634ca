// Package codex drives the Codex CLI through `codex app-server` (JSON-RPC
// over stdio) for one verified read-only turn per process.
//
// # Profile
//
// The app-server starts with -c sandbox_mode="read-only", -c
// approval_policy="never", every tool feature in [DisabledFeatures] off, and
// one -c mcp_servers.<name>.enabled=false per MCP server found in the user's
// config.toml (read with a real TOML parser from CODEX_HOME, else ~/.codex;
// AUD-P1-11). The CLI's effective configuration for the workspace
// (config/read with layers) adds project-layer servers. The same settings
// are repeated in the thread's config object, because a thread config layer
// replaces the -c layer for the keys it names and because Codex's -c parser
// cannot address server names that are not bare keys (verified, 0.169.0).
// `codex exec` is never used; no field of a turn reaches argv.
//
// # Verification (fail closed, before turn/start)
//
// Every thread/start and thread/resume result must report sandbox
// {"type":"readOnly","networkAccess":false}, approvalPolicy "never", a thread
// id and the workspace as cwd (else SANDBOX_UNAVAILABLE, reason
// codex.thread_policy); mcpServerStatus/list for the thread (all pages)
// must list every configured server as "disabled" and no server in another
// state (else codex.mcp_enabled). The model the thread reports goes through
// Turn.CheckModel and must equal Turn.Model when one was requested
// (POLICY_DENIED consent.model_mismatch, R-039); model/rerouted is checked
// the same way mid-turn. A hook notification aborts the turn (codex.hooks).
// On any refusal the process tree is killed and nothing reaches the model.
//
// # Sessions
//
// Threads are persistent by default: each call runs its own app-server
// process, and only a thread Codex wrote to CODEX_HOME can be resumed by a
// later call (thread/resume in a new process, re-verified like a start).
// They live where the user's own Codex sessions live. [Options.Ephemeral]
// starts threads that are never written; such results carry no SessionID.
// The metadata probe always uses an ephemeral thread and sends no prompt.
//
// # Server requests and errors
//
// Every server→client request is answered (approvals declined, permission
// requests granted nothing, elicitations declined, the rest refused with a
// JSON-RPC error) so a turn never hangs. Failures are typed from
// codexErrorInfo and the upstream HTTP status (rate limits keep the pushed
// reset time); unknown ones are PROCESS_ERROR. An app-server that exits
// mid-turn is PROCESS_ERROR and any streamed text is discarded.
//
// # Environment
//
// The child gets the allowlisted base environment, CODEX_HOME (set
// explicitly), CODEX_CA_CERTIFICATE, CODEX_SQLITE_HOME and the env_key of
// the configured top-level model provider — unless that is a provider API
// key (OPENAI_API_KEY, CODEX_API_KEY, …) and the user did not opt into
// API-key billing ([Options.APIKeyBilling]).
package codex
