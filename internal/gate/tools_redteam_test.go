package gate

import (
	"net/http"
	"strings"
	"testing"
)

// TestProviderFetchRefused (red team 2026-12-03): a content block whose
// source is a URL makes the provider itself fetch that URL (Anthropic
// image and document blocks with a "url" source; OpenAI input_image
// image_url and input_file file_url that are not data: URLs), wherever
// the block sits — a message, a tool result, a prompt variable. The URL
// is whatever the agent wrote, workspace content in its query included,
// and the party it names was named by no egress decision: refused
// request.provider_fetch. Inline content (base64, data: URLs) stays
// admitted.
func TestProviderFetchRefused(t *testing.T) {
	const ant = `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":%s}]}`
	const oai = `{"model":"gpt-5.1","max_output_tokens":10,"input":[{"role":"user","content":%s}]}`
	fill := func(tmpl, v string) string { return strings.Replace(tmpl, "%s", v, 1) }
	tests := []bodyCase{
		{"anthropic base64 image", Anthropic, fill(ant, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"text","text":"hi"}]`), ""},
		{"anthropic text document", Anthropic, fill(ant, `[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"}}]`), ""},
		{"anthropic tool input mentioning url", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"WebFetch","input":{"url":"https://example.com","type":"url"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`, ""},
		{"anthropic tool input shaped like a url source", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Fetch","input":{"source":{"type":"url","url":"https://example.com"}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`, ""},
		{"anthropic image url", Anthropic, fill(ant, `[{"type":"image","source":{"type":"url","url":"https://third.example/x.png?d=secret"}}]`), ReasonProviderFetch},
		{"anthropic document url", Anthropic, fill(ant, `[{"type":"document","source":{"type":"url","url":"https://third.example/x.pdf?d=secret"}}]`), ReasonProviderFetch},
		{"anthropic image url in tool result", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"url","url":"https://third.example/x.png"}}]}]}]}`, ReasonProviderFetch},
		{"anthropic url source escaped", Anthropic, fill(ant, `[{"type":"image","source":{"\u0074ype":"\u0075rl","url":"https://third.example/x.png"}}]`), ReasonProviderFetch},
		{"anthropic url source repeated type", Anthropic, fill(ant, `[{"type":"image","source":{"type":"base64","type":"url","url":"https://third.example/x.png"}}]`), ReasonProviderFetch},
		{"anthropic url document in system", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"system":[{"type":"document","source":{"type":"url","url":"https://third.example/x.pdf"}}],"messages":[{"role":"user","content":"hi"}]}`, ReasonProviderFetch},
		{"anthropic count_tokens image url", Anthropic, "count_tokens:" + fill(ant, `[{"type":"image","source":{"type":"url","url":"https://third.example/x.png"}}]`), ReasonProviderFetch},
		{"openai data image", OpenAI, fill(oai, `[{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"},{"type":"input_text","text":"hi"}]`), ""},
		{"openai file id", OpenAI, fill(oai, `[{"type":"input_file","file_id":"file-1"},{"type":"input_image","file_id":"file-2","image_url":null}]`), ReasonProviderState}, // TestProviderStateRefused
		{"openai function schema naming image_url", OpenAI, `{"model":"gpt-5.1","max_output_tokens":10,"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"image_url":{"type":"string"},"file_url":{"type":"string"}}}}],"input":"hi"}`, ""},
		{"openai image url", OpenAI, fill(oai, `[{"type":"input_image","image_url":"https://third.example/x.png?d=secret"}]`), ReasonProviderFetch},
		{"openai file url", OpenAI, fill(oai, `[{"type":"input_file","file_url":"https://third.example/x.pdf?d=secret"}]`), ReasonProviderFetch},
		{"openai image url in function output", OpenAI, `{"model":"gpt-5.1","max_output_tokens":10,"input":[{"type":"function_call_output","call_id":"c1","output":[{"type":"input_image","image_url":"https://third.example/x.png"}]}]}`, ReasonProviderFetch},
		{"openai image url in prompt variable", OpenAI, `{"model":"gpt-5.1","max_output_tokens":10,"prompt":{"id":"pmpt_1","variables":{"v":{"type":"input_image","image_url":"https://third.example/x.png"}}},"input":"hi"}`, ReasonHostedTool}, // a stored prompt is refused first (TestStoredPromptRefused)
		{"openai image url object", OpenAI, fill(oai, `[{"type":"input_image","image_url":{"url":"https://third.example/x.png"}}]`), ReasonProviderFetch},
		{"openai image url escaped key", OpenAI, fill(oai, `[{"type":"input_image","\u0069mage_url":"https://third.example/x.png"}]`), ReasonProviderFetch},
		{"openai image url repeated", OpenAI, fill(oai, `[{"type":"input_image","image_url":"https://third.example/x.png","image_url":"data:image/png;base64,AA=="}]`), ReasonProviderFetch},
		{"openai compact image url", OpenAI, "compact:" + fill(oai, `[{"type":"input_image","image_url":"https://third.example/x.png"}]`), ReasonProviderFetch},
	}
	runBodyCases(t, tests)
}

// bodyCase is a request body sent to provider p's model route (see
// sendBody for the route prefixes) and the refusal reason it must get
// ("" = admitted and forwarded).
type bodyCase struct {
	name string
	p    Provider
	body string
	want string
}

// openAIBody is a bodyCase for OpenAI's model route.
type openAIBody struct{ name, body, want string }

func runOpenAIBodies(t *testing.T, tests []openAIBody) {
	t.Helper()
	cases := make([]bodyCase, len(tests))
	for i, tt := range tests {
		cases[i] = bodyCase{tt.name, OpenAI, tt.body, tt.want}
	}
	runBodyCases(t, cases)
}

// runBodyCases sends each case through a fresh gate and checks its
// reason, that a refusal reached no upstream (403, as every refusal of
// what the body makes the provider reach) and that an admitted body did.
func runBodyCases(t *testing.T, tests []bodyCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			_, phantom := f.grant(spec(tt.p))
			got, status := sendBody(t, f, tt.p, phantom, tt.body)
			if got != tt.want {
				t.Errorf("reason %q (status %d), want %q", got, status, tt.want)
			}
			if (tt.want == ReasonProviderState || tt.want == ReasonProviderFetch) && status != 403 {
				t.Errorf("status %d, want 403 (not retried)", status)
			}
			seen := len(f.anth.Requests()) + len(f.oai.Requests())
			if want := map[bool]int{true: 1, false: 0}[tt.want == ""]; seen != want {
				t.Errorf("doubles saw %d requests, want %d", seen, want)
			}
		})
	}
}

// sendBody posts body as a model request of provider p (to
// count_tokens or responses/compact when it starts with "count_tokens:"
// or "compact:") and returns the gate's reason header and status.
func sendBody(t *testing.T, f *fixture, p Provider, phantom, body string) (string, int) {
	t.Helper()
	path := "/v1/messages"
	if p == OpenAI {
		path = "/v1/responses"
	}
	if b, ok := strings.CutPrefix(body, "count_tokens:"); ok {
		path, body = "/v1/messages/count_tokens", b
	}
	if b, ok := strings.CutPrefix(body, "compact:"); ok {
		path, body = "/v1/responses/compact", b
	}
	req, err := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if p == OpenAI {
		req.Header.Set("Authorization", "Bearer "+phantom)
	} else {
		req.Header.Set("X-Api-Key", phantom)
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	return resp.Header.Get("X-Coagent8-Gate-Reason"), resp.StatusCode
}

// TestHostedShellRefused (red team 2026-12-03): OpenAI's "shell" tool is
// the client's only in its local mode; with an "environment" of
// container_auto or container_reference the provider runs the commands
// in its own container, whose network policy can allow any domain: a
// hosted tool, refused request.hosted_tool like code_interpreter.
func TestHostedShellRefused(t *testing.T) {
	tests := []struct {
		name, tools, want string
	}{
		{"local shell", `[{"type":"shell"}]`, ""},
		{"local shell environment", `[{"type":"shell","environment":{"type":"local"}}]`, ""},
		{"null environment", `[{"type":"shell","environment":null}]`, ""},
		{"container auto", `[{"type":"shell","environment":{"type":"container_auto","network_policy":{"type":"allowlist","allowed_domains":["third.example"]}}}]`, ReasonHostedTool},
		{"container reference", `[{"type":"shell","environment":{"type":"container_reference","container_id":"cntr_1"}}]`, ReasonHostedTool},
		{"environment without type", `[{"type":"shell","environment":{}}]`, ReasonHostedTool},
		{"container auto in namespace", `[{"type":"namespace","name":"n","tools":[{"type":"shell","environment":{"type":"container_auto"}}]}]`, ReasonHostedTool},
		{"environment in other case", `[{"type":"shell","Environment":{"type":"local"},"environment":{"type":"container_auto"}}]`, ReasonBody},
		{"environment type repeated", `[{"type":"shell","environment":{"type":"local","type":"container_auto"}}]`, ReasonBody},
		{"environment type in other case", `[{"type":"shell","environment":{"TYPE":"local","type":"container_auto"}}]`, ReasonBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			gr, phantom := f.grant(spec(OpenAI))
			got, status := sendTools(t, f, OpenAI, phantom, gr.Model, tt.tools)
			if got != tt.want {
				t.Errorf("reason %q (status %d), want %q", got, status, tt.want)
			}
			if seen, want := len(f.oai.Requests()), map[bool]int{true: 1, false: 0}[tt.want == ""]; seen != want {
				t.Errorf("double saw %d requests, want %d", seen, want)
			}
		})
	}
}

// TestStoredPromptRefused (red team 2026-12-03): an OpenAI "prompt"
// names a prompt object stored in the project, and a stored prompt holds
// configuration — model, instructions and tools (OpenAI's Assistants
// migration guide), hosted tools included — that the body does not
// show: the gate cannot read what it would offer, so the key is refused
// request.hosted_tool like mcp_servers. Its spellings are refused as
// ambiguous.
func TestStoredPromptRefused(t *testing.T) {
	tests := []openAIBody{
		{"no prompt", `{"model":"gpt-5.1","max_output_tokens":10,"input":"hi"}`, ""},
		{"stored prompt", `{"model":"gpt-5.1","max_output_tokens":10,"prompt":{"id":"pmpt_1","version":"2"},"input":"hi"}`, ReasonHostedTool},
		{"stored prompt null", `{"model":"gpt-5.1","max_output_tokens":10,"prompt":null,"input":"hi"}`, ReasonHostedTool},
		{"stored prompt escaped", `{"model":"gpt-5.1","max_output_tokens":10,"\u0070rompt":{"id":"pmpt_1"},"input":"hi"}`, ReasonHostedTool},
		{"prompt in other case", `{"model":"gpt-5.1","max_output_tokens":10,"Prompt":{"id":"pmpt_1"},"input":"hi"}`, ReasonBody},
	}
	runOpenAIBodies(t, tests)
}
