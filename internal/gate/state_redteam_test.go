package gate

import (
	"strings"
	"testing"
)

// TestInputItemIDRefused: an OpenAI input item that carries an id can
// name an item the provider stored (the default, store true) and stand
// in for its content: an item reference needs no "type" at all (the
// API's ItemReference has it optional), and a reasoning item given by id
// without its encrypted_content is read back from storage. Either is
// billed as input the body does not carry, like previous_response_id:
// refused request.provider_state. Items that carry their content keep
// their ids (Codex 0.169.0 sends "msg_<uuid>" ids on its messages).
func TestInputItemIDRefused(t *testing.T) {
	const oai = `{"model":"gpt-5.1","max_output_tokens":10,"input":%s}`
	fill := func(input string) string { return strings.Replace(oai, "%s", input, 1) }
	tests := []openAIBody{
		{"typeless item reference", fill(`[{"id":"msg_1"},{"role":"user","content":"hi"}]`), ReasonProviderState},
		{"null-typed item reference", fill(`[{"type":null,"id":"msg_1"}]`), ReasonProviderState},
		{"escaped id key", fill(`[{"i\u0064":"msg_1"}]`), ReasonProviderState},
		{"id after a null copy", fill(`[{"id":null,"id":"msg_1"}]`), ReasonProviderState},
		{"reasoning by id", fill(`[{"type":"reasoning","id":"rs_1","summary":[]},{"role":"user","content":"hi"}]`), ReasonProviderState},
		{"reasoning by id, encrypted_content null", fill(`[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":null}]`), ReasonProviderState},
		{"typed and null-typed copies", fill(`[{"type":"message","type":null,"id":"msg_1"}]`), ReasonProviderState},
		{"codex message with id", fill(`[{"type":"message","id":"msg_acb84632-4757-5230-a29c-512d64b45f0e","role":"developer","content":[{"type":"input_text","text":"x"}]}]`), ""},
		{"reasoning by id with its content", fill(`[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}]`), ""},
		{"compact typeless reference", "compact:" + fill(`[{"id":"msg_1"}]`), ReasonProviderState},
		{"null id", fill(`[{"type":"message","id":null,"role":"user","content":"hi"}]`), ""},
		{"codex reasoning without id", fill(`[{"type":"reasoning","summary":[],"encrypted_content":"gAAA"},{"role":"user","content":"hi"}]`), ""},
		{"id inside content", fill(`[{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"{\"id\":1}"}]}]`), ""},
		{"id in a nested object", fill(`[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}","meta":{"id":"x"}}]`), ""},
		{"string input", fill(`"hi"`), ""},
	}
	runOpenAIBodies(t, tests)
}
