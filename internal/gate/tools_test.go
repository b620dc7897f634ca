package gate

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestHostedToolRefused: only tools the client runs are admitted; a tool
// the provider would run itself (web search, web fetch, code execution,
// remote MCP, the MCP connector) would carry the agent's content to a
// party no egress decision named, and is refused request.hosted_tool; an
// ambiguous or repeated "type" is refused as a body the gate cannot read
// as the provider does.
func TestHostedToolRefused(t *testing.T) {
	tests := []struct {
		name  string
		p     Provider
		tools string // the value of "tools", or a whole extra member when it starts with ","
		want  string // "" = admitted; else the reason
	}{
		{"anthropic custom tools", Anthropic, `[{"name":"Bash","input_schema":{"type":"object"}},{"type":"custom","name":"Edit"}]`, ""},
		{"anthropic client tools by version", Anthropic, `[{"type":"bash_20250124","name":"bash"},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}]`, ""},
		{"anthropic web search", Anthropic, `[{"name":"Bash"},{"type":"web_search_20250305","name":"web_search"}]`, ReasonHostedTool},
		{"anthropic web fetch", Anthropic, `[{"type":"web_fetch_20250910","name":"web_fetch"}]`, ReasonHostedTool},
		{"anthropic code execution", Anthropic, `[{"type":"code_execution_20250825","name":"code_execution"}]`, ReasonHostedTool},
		{"anthropic mcp connector", Anthropic, `[],"mcp_servers":[{"type":"url","url":"https://mcp.example","name":"x"}]`, ReasonHostedTool},
		{"anthropic bare version prefix", Anthropic, `[{"type":"bash_","name":"bash"}]`, ReasonHostedTool},
		{"anthropic prefix without a date", Anthropic, `[{"type":"bash_code_execution_20250825","name":"bash"}]`, ReasonHostedTool},
		{"anthropic memory and computer by date", Anthropic, `[{"type":"memory_20250818","name":"memory"},{"type":"computer_20250124","name":"computer"}]`, ""},
		{"null tools", Anthropic, `null`, ""},
		{"openai functions", OpenAI, `[{"type":"function","name":"exec_command","parameters":{"type":"object"}},{"type":"custom","name":"apply_patch"}]`, ""},
		{"openai web search", OpenAI, `[{"type":"function","name":"exec_command"},{"type":"web_search"}]`, ReasonHostedTool},
		{"openai web search preview", OpenAI, `[{"type":"web_search_preview_2025_03_11"}]`, ReasonHostedTool},
		{"openai namespace of functions", OpenAI, `[{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"close_agent"}]}]`, ""},
		{"openai namespace hiding web search", OpenAI, `[{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"},{"type":"web_search"}]}]`, ReasonHostedTool},
		{"openai namespace tools in other case", OpenAI, `[{"type":"namespace","name":"n","TOOLS":[{"type":"web_search"}]}]`, ReasonBody},
		{"openai remote mcp", OpenAI, `[{"type":"mcp","server_url":"https://mcp.example","server_label":"x"}]`, ReasonHostedTool},
		{"openai file search", OpenAI, `[{"type":"file_search","vector_store_ids":["vs_1"]}]`, ReasonHostedTool},
		{"anthropic type in other case", Anthropic, `[{"Type":"custom","type":"web_search_20250305","name":"w"}]`, ReasonBody},
		{"repeated type", OpenAI, `[{"type":"function","type":"web_search"}]`, ReasonBody},
		{"tools not an array", OpenAI, `{"type":"web_search"}`, ReasonBody},
		{"tool not an object", OpenAI, `["web_search"]`, ReasonBody},
		{"tools in other case", OpenAI, `[],"Tools":[{"type":"web_search"}]`, ReasonBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			gr, phantom := f.grant(spec(tt.p))
			got, status := sendTools(t, f, tt.p, phantom, gr.Model, tt.tools)
			if got != tt.want {
				t.Errorf("reason %q (status %d), want %q", got, status, tt.want)
			}
			seen := len(f.anth.Requests()) + len(f.oai.Requests())
			if want := map[bool]int{true: 1, false: 0}[tt.want == ""]; seen != want {
				t.Errorf("doubles saw %d requests, want %d", seen, want)
			}
		})
	}
}

// sendTools posts a request for provider p whose "tools" member is
// tools, and returns the gate's reason header and status.
func sendTools(t *testing.T, f *fixture, p Provider, phantom, model, tools string) (string, int) {
	t.Helper()
	limit := `"max_tokens":10`
	if p == OpenAI {
		limit = `"max_output_tokens":10`
	}
	return sendBody(t, f, p, phantom, `{"model":"`+model+`",`+limit+`,"stream":true,"tools":`+tools+
		`,"input":"hi","messages":[{"role":"user","content":"hi"}]}`)
}

// FuzzParseBody: a body parseBody accepts reads the same under a plain
// exact-key reader (maps of raw members): the same model, the same tool
// types, so the provider runs the tools the gate admitted.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":1,"tools":[{"name":"a"},{"type":"bash_20250124"}]}`,
		`{"model":"m","tools":[{"type":"web_search"}],"mcp_servers":[]}`,
		`{"model":"m","prompt":{"id":"pmpt_1"}}`,
		`{"model":"m","tools":[{"Type":"x","type":"y"}]}`,
		`{"model":"m","tools":null}`,
		`{"model":"m","tools":[{"type":"namespace","tools":[{"type":"function"},{"type":"mcp"}]}]}`,
		`{"model":"m","tools":[{"type":"shell","environment":{"type":"local"}},{"type":"shell","environment":{"type":"container_auto"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseBody(b)
		if err != nil {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatalf("parseBody accepted %q, which is not a JSON object: %v", b, err)
		}
		var model string
		if err := json.Unmarshal(top["model"], &model); err != nil || model != got.Model {
			t.Fatalf("model %q, exact reader %q (%v)", got.Model, model, err)
		}
		if _, ok := top["mcp_servers"]; ok != got.MCPServers {
			t.Fatalf("mcp_servers %v, exact reader %v", got.MCPServers, ok)
		}
		if _, ok := top["prompt"]; ok != got.Prompt {
			t.Fatalf("prompt %v, exact reader %v", got.Prompt, ok)
		}
		if want := exactToolTypes(t, top["tools"]); !slices.Equal(want, got.ToolTypes) {
			t.Fatalf("tool types %q, exact reader %q", got.ToolTypes, want)
		}
	})
}

// exactToolTypes is toolTypes by plain exact-key maps.
func exactToolTypes(t *testing.T, raw json.RawMessage) []string {
	var tools []map[string]json.RawMessage
	_ = json.Unmarshal(raw, &tools)
	var out []string
	for i, tool := range tools {
		var typ string
		if raw, ok := tool["type"]; ok {
			if err := json.Unmarshal(raw, &typ); err != nil {
				t.Fatalf("tool %d type %s accepted, not a string", i, raw)
			}
		}
		if raw, ok := tool["environment"]; ok && string(raw) != "null" {
			var env map[string]json.RawMessage
			var envType string
			_ = json.Unmarshal(raw, &env)
			_ = json.Unmarshal(env["type"], &envType)
			if envType != "local" {
				typ += "." + envType
			}
		}
		out = append(append(out, typ), exactToolTypes(t, tool["tools"])...)
	}
	return out
}
