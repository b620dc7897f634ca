package gate

import (
	"strings"
	"testing"
)

// TestProviderStateRefused: a body that names content the provider
// stores — an earlier response (previous_response_id), a conversation, an
// item_reference, an uploaded file (OpenAI file_id, an Anthropic "file"
// source or container_upload block) — makes the provider bill input the
// body does not carry, beyond the reservation (every body byte an input
// token), and add content no egress decision saw. Refused
// request.provider_state before any byte leaves; null values, schemas and
// tool inputs that merely use the names stay admitted.
func TestProviderStateRefused(t *testing.T) {
	const ant = `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":%s}]}`
	const oai = `{"model":"gpt-5.1","max_output_tokens":10%s,"input":%s}`
	fillA := func(v string) string { return strings.Replace(ant, "%s", v, 1) }
	fillO := func(top, input string) string {
		return strings.Replace(strings.Replace(oai, "%s", top, 1), "%s", input, 1)
	}
	tests := []bodyCase{
		{"openai inline input", OpenAI, fillO("", `[{"role":"user","content":"hi"}]`), ""},
		{"openai null state keys", OpenAI, fillO(`,"previous_response_id":null,"conversation":null,"store":false`, `"hi"`), ""},
		{"openai schema naming file_id", OpenAI, `{"model":"gpt-5.1","max_output_tokens":10,"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"file_id":{"type":"string"}}}}],"input":"hi"}`, ""},
		{"openai function arguments naming file_id", OpenAI, fillO("", `[{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"file_id\":\"file-1\"}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]`), ""},
		{"openai previous response", OpenAI, fillO(`,"previous_response_id":"resp_1"`, `"hi"`), ReasonProviderState},
		{"openai conversation id", OpenAI, fillO(`,"conversation":"conv_1"`, `"hi"`), ReasonProviderState},
		{"openai conversation object", OpenAI, fillO(`,"conversation":{"id":"conv_1"}`, `"hi"`), ReasonProviderState},
		{"openai previous response escaped key", OpenAI, fillO(`,"previous_respons\u0065_id":"resp_1"`, `"hi"`), ReasonProviderState},
		{"openai previous response other case", OpenAI, fillO(`,"Previous_Response_Id":"resp_1"`, `"hi"`), ReasonBody},
		{"openai previous response repeated", OpenAI, fillO(`,"previous_response_id":null,"previous_response_id":"resp_1"`, `"hi"`), ReasonBody},
		{"openai item reference", OpenAI, fillO("", `[{"type":"item_reference","id":"msg_1"},{"role":"user","content":"hi"}]`), ReasonProviderState},
		{"openai input file id", OpenAI, fillO("", `[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]`), ReasonProviderState},
		{"openai image file id in function output", OpenAI, fillO("", `[{"type":"function_call_output","call_id":"c1","output":[{"type":"input_image","file_id":"file-1"}]}]`), ReasonProviderState},
		{"openai compact previous response", OpenAI, "compact:" + fillO(`,"previous_response_id":"resp_1"`, `"hi"`), ReasonProviderState},
		{"anthropic base64 document", Anthropic, fillA(`[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}]`), ""},
		{"anthropic tool input naming a file", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Upload","input":{"file_id":"file-1","kind":"file"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`, ""},
		{"anthropic tool input shaped like a file source", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Attach","input":{"source":{"type":"file","file_id":"f"},"blocks":[{"type":"container_upload"}]}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`, ""},
		{"anthropic file source", Anthropic, fillA(`[{"type":"document","source":{"type":"file","file_id":"file_011"}}]`), ReasonProviderState},
		{"anthropic file image in tool result", Anthropic, `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"file","file_id":"file_011"}}]}]}]}`, ReasonProviderState},
		{"anthropic file source escaped", Anthropic, fillA(`[{"type":"document","source":{"type":"\u0066ile","file_id":"file_011"}}]`), ReasonProviderState},
		{"anthropic container upload", Anthropic, fillA(`[{"type":"container_upload","file_id":"file_011"}]`), ReasonProviderState},
		{"anthropic count_tokens file source", Anthropic, "count_tokens:" + fillA(`[{"type":"document","source":{"type":"file","file_id":"file_011"}}]`), ReasonProviderState},
	}
	runBodyCases(t, tests)
}
