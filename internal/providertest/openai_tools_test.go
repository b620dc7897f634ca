package providertest

import "testing"

// TestOpenAIToolsScript: a Responses request whose input carries k
// function call outputs gets the k-th scripted call; a request sent again
// gets the same step; requests past the script get the text answer; call
// ids are never repeated (a client pairs each output with its call).
func TestOpenAIToolsScript(t *testing.T) {
	o := NewOpenAITools(t, Options{Default: Reply{Text: "done"}},
		FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "true"}},
		FunctionCall{Name: "exec_command", Arguments: map[string]any{"cmd": "false"}})
	output := func(id string) string {
		return `{"type":"function_call","call_id":"` + id + `","name":"exec_command","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"` + id + `","output":"ok"}`
	}
	user := `{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}`
	cases := []struct {
		input string
		want  string // the first output item's type, and a call's command
	}{
		{`"go"`, "function_call true"},
		{`[` + user + `]`, "function_call true"},
		{`[` + user + `]`, "function_call true"}, // sent again
		{`[` + user + `,` + output("c1") + `]`, "function_call false"},
		{`[` + user + `,` + output("c1") + `,` + output("c2") + `]`, "message"},
	}
	seen := map[string]bool{}
	for i, tc := range cases {
		_, data := events(t, post(t, o.URL()+"/v1/responses", `{"model":"m","stream":true,"input":`+tc.input+`}`,
			map[string]string{"authorization": "Bearer k"}).Body)
		var item map[string]any
		for _, d := range data {
			if d["type"] == "response.output_item.done" {
				item = d["item"].(map[string]any)
				break
			}
		}
		if item == nil {
			t.Fatalf("request %d: no output item in %v", i, data)
		}
		got := item["type"].(string)
		if args, ok := item["arguments"].(string); ok {
			got += " " + map[string]string{`{"cmd":"true"}`: "true", `{"cmd":"false"}`: "false"}[args]
			id, _ := item["call_id"].(string)
			if id == "" || seen[id] {
				t.Errorf("request %d: call id %q empty or repeated", i, id)
			}
			seen[id] = true
		}
		if got != tc.want {
			t.Errorf("request %d: got %q, want %q", i, got, tc.want)
		}
	}
}
