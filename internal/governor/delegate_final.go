package governor

import "github.com/coagent8/coagent8/internal/delegation"

// finalMessage is a finished job's final agent message (untrusted bytes,
// nil when there is none): Codex's last agentMessage of its verified
// app-server turn ([delegation.Result.Final]; its stdout is a JSON-RPC
// transcript, not stream-json), else Claude Code's result event in out.
func finalMessage(rt delegation.Runtime, res delegation.Result, out *tail) []byte {
	if rt.IsCodex() {
		if res.Final == "" {
			return nil
		}
		return []byte(res.Final)
	}
	return out.final()
}
