package providertest

import "testing"

// TestAnthropicToolsScript: a request that offers tools and carries k
// tool results gets the k-th scripted tool use; a request sent again
// (same k) gets the same step, not the next one; requests offering no
// tool, and those past the script, get the text answer; no two answers
// share a message or tool-use id (Claude Code drops a message whose id it
// has seen).
func TestAnthropicToolsScript(t *testing.T) {
	a := NewAnthropicTools(t, Options{Default: Reply{Text: "done"}},
		ToolUse{Name: "Read", Input: map[string]any{"file_path": "/a"}},
		ToolUse{Name: "Bash", Input: map[string]any{"command": "true"}})
	const tools = `,"tools":[{"name":"Read"},{"name":"Bash"}]`
	result := func(id string) string {
		return `{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"Read","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"ok"}]}`
	}
	first := `[{"role":"user","content":"go"}]`
	second := `[{"role":"user","content":"go"},` + result("t1") + `]`
	third := `[{"role":"user","content":[{"type":"text","text":"go"}]},` + result("t1") + `,` + result("t2") + `]`
	cases := []struct {
		body string
		want string // the first content block's type, and the tool's name
	}{
		{`{"model":"m","stream":true,"messages":` + first + `}`, "text"},
		{`{"model":"m","stream":true,"tools":[],"messages":` + first + `}`, "text"},
		{`{"model":"m","stream":true,"messages":` + first + tools + `}`, "tool_use Read"},
		{`{"model":"m","stream":true,"messages":` + first + tools + `}`, "tool_use Read"}, // sent again
		{`{"model":"m","stream":true,"messages":` + second + tools + `}`, "tool_use Bash"},
		{`{"model":"m","stream":true,"messages":` + second + tools + `}`, "tool_use Bash"},
		{`{"model":"m","stream":true,"messages":` + third + tools + `}`, "text"},
		{`{"model":"m","stream":true,"messages":` + second + `}`, "text"}, // a side request
	}
	seen := map[string]bool{}
	for i, tc := range cases {
		_, data := events(t, post(t, a.URL()+"/v1/messages", tc.body, map[string]string{"x-api-key": "k"}).Body)
		msg := data[0]["message"].(map[string]any)
		block := data[1]["content_block"].(map[string]any)
		got := block["type"].(string)
		if name, ok := block["name"].(string); ok {
			got += " " + name
		}
		if got != tc.want {
			t.Errorf("request %d: got %q, want %q", i, got, tc.want)
		}
		for _, id := range []any{msg["id"], block["id"]} {
			if s, ok := id.(string); ok {
				if seen[s] {
					t.Errorf("request %d: id %q repeated", i, s)
				}
				seen[s] = true
			}
		}
	}
	if got, want := len(a.Requests()), len(cases); got != want {
		t.Errorf("recorded %d requests, want %d", got, want)
	}
	if seen[""] {
		t.Error("an answer has an empty id")
	}
}
