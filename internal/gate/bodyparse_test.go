package gate

import "testing"

// TestParseBodyReadsWhatAStrictUpstreamReads: the gate binds the grant's
// model and reserves the output limit from parseBody, then forwards the
// original bytes. encoding/json matches keys case-insensitively (with
// Unicode folding: U+212A KELVIN SIGN folds to 'k') and keeps the last
// duplicate, while providers read keys exactly. A body whose keys differ
// only that way must be refused, else the gate meters one model or limit
// and the provider runs another (red-team finding, parser differential).
func TestParseBodyReadsWhatAStrictUpstreamReads(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"case variant model last", `{"model":"claude-opus-9","MODEL":"claude-sonnet-5-5","max_tokens":10}`},
		{"duplicate model", `{"model":"claude-opus-9","model":"claude-sonnet-5-5","max_tokens":10}`},
		{"kelvin max_tokens last", `{"model":"claude-sonnet-5-5","max_tokens":64000,"max_to` + "\u212a" + `ens":1}`},
		{"case variant max_output_tokens", `{"model":"gpt-5.4","max_output_tokens":64000,"MAX_OUTPUT_TOKENS":1}`},
		{"duplicate other key", `{"model":"claude-sonnet-5-5","stream":true,"stream":false}`},
		{"trailing object", `{"model":"claude-sonnet-5-5"}{"model":"claude-opus-9"}`},
		{"model not a string", `{"model":["claude-sonnet-5-5"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBody([]byte(tt.body))
			if err == nil {
				t.Fatalf("parseBody(%s) = model %q, limit %d; want an error (ambiguous keys)", tt.body, got.Model, got.outputLimit(Anthropic, 0))
			}
		})
	}
}

func TestParseBodyAcceptsOrdinaryRequests(t *testing.T) {
	got, err := parseBody([]byte(` {"model":"claude-sonnet-5-5","max_tokens":32000,"stream":true,"messages":[{"role":"user","content":"MODEL max_tokens"}]} `))
	if err != nil || got.Model != "claude-sonnet-5-5" || got.outputLimit(Anthropic, 0) != 32000 {
		t.Fatalf("parseBody = %+v, %v", got, err)
	}
}
