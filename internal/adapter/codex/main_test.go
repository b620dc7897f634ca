package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// TestMain re-executes the test binary as one of three helpers, chosen by
// argv (the backend's env allowlist would drop a control variable):
//
//	<bin> app-server …   scripted fake app-server or wrapper (fake.go),
//	                     scenario read from $CODEX_HOME/fake.json
//	<bin> mcp-serve      a minimal real stdio MCP server
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "app-server":
			os.Exit(fakeAppServer(os.Args[2:]))
		case "mcp-serve":
			mcpServe()
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}

// mcpServe answers MCP initialize and tools/list over stdio: enough for
// Codex to report the server "connected" when it is not disabled.
func mcpServe() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		var result any = map[string]any{}
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion,
				"capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo":   map[string]any{"name": "coagent8-test-mcp", "version": "1.0.0"}}
		case "tools/list":
			result = map[string]any{"tools": []any{}}
		}
		enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}
