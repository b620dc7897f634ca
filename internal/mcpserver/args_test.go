package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestInvalidParamsRedactCredentials: the validator quotes values and
// unknown keys; a credential in the wrong field must not come back in the
// JSON-RPC error, whole or as a prefix cut by the bound.
func TestInvalidParamsRedactCredentials(t *testing.T) {
	token := "ghp_" + strings.Repeat("Zb9", 12)
	long := "sk-ant-api03-" + strings.Repeat("Q7x", 120) + "AA"
	_, resolved := schemaFor[ConsultArgs](consultSchema)
	tests := []struct {
		name string
		args map[string]any
	}{
		{"enum value", map[string]any{"proposal": "p", "backend": token}},
		{"type mismatch", map[string]any{"proposal": "p", "timeout_ms": token}},
		{"unknown key", map[string]any{"proposal": "p", token: true}},
		{"past the bound", map[string]any{"proposal": "p", "reasoning_effort": strings.Repeat("x", 200) + " " + long}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(tt.args)
			_, err := decode[ConsultArgs](raw, resolved)
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("err = %v, want invalid params", err)
			}
			for _, frag := range []string{token[:10], long[:16], "Zb9Zb9Zb9", "Q7xQ7xQ7x"} {
				if strings.Contains(werr.Message, frag) {
					t.Errorf("message %q contains %q", werr.Message, frag)
				}
			}
			if got := len(werr.Message); got > len("Invalid arguments: ")+maxInvalidMessage+len("…") {
				t.Errorf("message is %d bytes, want bounded", got)
			}
		})
	}
}
