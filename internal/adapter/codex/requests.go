package codex

import (
	"encoding/json"

	"github.com/coagent8/coagent8/internal/adapter/codex/jsonrpc"
)

// refusals answers every server→client request so a turn never hangs
// waiting for a decision (notes/backends.md §1.1). Under approval policy
// "never" none should arrive; each one that does is a warning. Response
// shapes are the 0.169.0 schema's: decline keeps the turn going with the
// action refused.
var refusals = map[string]any{
	"item/commandExecution/requestApproval": map[string]any{"decision": "decline"},
	"item/fileChange/requestApproval":       map[string]any{"decision": "decline"},
	"applyPatchApproval":                    map[string]any{"decision": denied},
	"execCommandApproval":                   map[string]any{"decision": denied},
	"item/permissions/requestApproval":      map[string]any{"permissions": map[string]any{}, "scope": "turn"},
	"mcpServer/elicitation/request":         map[string]any{"action": "decline"},
}

var denied = map[string]any{"denied": map[string]any{"rejection": "coagent8 runs Codex read-only; this action is not allowed."}}

// Request implements jsonrpc.Handler: a refusal for every method
// (item/tool/requestUserInput, item/tool/call, token refresh and
// attestation get an error response).
func (e *events) Request(method string, _ json.RawMessage) (any, *jsonrpc.Error) {
	e.mu.Lock()
	e.warn("codex: declined server request " + clip(method, 80))
	e.mu.Unlock()
	if r, ok := refusals[method]; ok {
		return r, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not supported by coagent8 (read-only profile)"}
}
