package gate

import (
	"slices"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/egress"
)

// TestBodilessRouteHeaderIsDecided: the model listing (GET /v1/models)
// forwards Accept and its query; a credential format or labelled content
// in them is refused before any byte leaves, as on the model routes.
func TestBodilessRouteHeaderIsDecided(t *testing.T) {
	tests := []struct {
		name, query, accept, reason string
	}{
		{"credential in accept", "", "ghp_" + strings.Repeat("a", 36), egress.ReasonCategory},
		{"provider key in accept", "", realKey(Anthropic), egress.ReasonCategory},
		{"labelled content in accept", "", "application/x-" + privateMarker, egress.ReasonHeader},
		{"plain listing", "?client_version=0.63.0", "application/json", ""},
		{"labelled content in the query", "?client_version=" + privateMarker, "application/json", ReasonQuery},
		{"a credential shape in the query", "?client_version=sk-ant-api03-" + strings.Repeat("a", 20), "application/json", ReasonQuery},
		{"a bare question mark", "?", "application/json", ReasonQuery},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { labelledDecider(t, o) })
			_, phantom := f.grant(spec(OpenAI))
			resp := send(f, "GET", "/v1/models"+tt.query, "", map[string]string{"Authorization": "Bearer " + phantom, "Accept": tt.accept})
			readAll(t, resp)
			if got := resp.Header.Get("X-Coagent8-Gate-Reason"); got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
			if tt.reason == "" {
				got := headerNames(t, f.oai.Requests())
				if want := []string{"Accept", "Accept-Encoding", "Authorization"}; !slices.Equal(got, want) {
					t.Errorf("headers upstream %v, want %v", got, want)
				}
				return
			}
			if n := len(f.oai.Requests()); n != 0 {
				t.Errorf("double saw %d requests, want 0: %v", n, f.oai.Requests()[0].Header)
			}
			if n := f.secrets.calls.Load(); n != 0 {
				t.Errorf("secret resolved %d times for a refused request", n)
			}
		})
	}
}

// TestQueryToken: each admitted parameter's form.
func TestQueryToken(t *testing.T) {
	for _, tt := range []struct {
		k, v string
		want bool
	}{
		{"beta", "true", true}, {"beta", "false", true}, {"beta", "TRUE", false}, {"beta", "", false}, {"beta", "yes", false},
		{"client_version", "0.169.0", true}, {"client_version", "1", true}, {"client_version", "", false},
		{"client_version", ".1", false}, {"client_version", "1.", false}, {"client_version", "1..2", false},
		{"client_version", "0.170.0-alpha.1", false}, {"client_version", "PROJECT-NIGHTJAR", false},
		{"client_version", strings.Repeat("1", 33), false},
	} {
		if got := queryToken(tt.k, tt.v); got != tt.want {
			t.Errorf("queryToken(%q, %q) = %v, want %v", tt.k, tt.v, got, tt.want)
		}
	}
}

// TestOutputLimitIsTheProvidersOwn: the reservation's output limit is the
// field the provider reads; the other provider's field is no limit there.
func TestOutputLimitIsTheProvidersOwn(t *testing.T) {
	const ceiling = 64000
	for _, tt := range []struct {
		name string
		p    Provider
		body string
		want int64
	}{
		{"anthropic max_tokens", Anthropic, `{"model":"m","max_tokens":100}`, 100},
		{"anthropic without a limit", Anthropic, `{"model":"m"}`, ceiling},
		{"openai max_output_tokens", OpenAI, `{"model":"m","max_output_tokens":100}`, 100},
		{"openai max_tokens is not its limit", OpenAI, `{"model":"m","max_tokens":1}`, ceiling},
		{"openai both", OpenAI, `{"model":"m","max_tokens":1,"max_output_tokens":5000}`, 5000},
		{"anthropic max_output_tokens is not its limit", Anthropic, `{"model":"m","max_output_tokens":1}`, ceiling},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := parseBody([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := b.outputLimit(tt.p, ceiling); got != tt.want {
				t.Errorf("outputLimit = %d, want %d", got, tt.want)
			}
		})
	}
}
