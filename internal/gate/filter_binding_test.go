package gate

import (
	"net/http"
	"strings"
	"testing"
)

// TestFilterKeepsTheBinding: the privacy filter rewrites the raw body
// bytes wherever a label's pattern matches, the metered fields included.
// A filtered body that names another model, or another output limit, than
// the one the gate bound and reserved for is refused before any byte
// leaves (egress.filter_binding); a filter that rewrites content only is
// forwarded (helper-59's lead: the binding was not re-checked).
func TestFilterKeepsTheBinding(t *testing.T) {
	tests := []struct {
		name, pattern string
		wantStatus    int
		wantReason    string
	}{
		{"content only", privateMarker, 200, ""},
		{"the model's name", "sonnet", 403, ReasonFilterBinding},
		{"the output limit's key", "max_tokens", 403, ReasonFilterBinding},
		// A rewrite that breaks the JSON is the filter's own refusal.
		{"the output limit's value", `"max_tokens":10\b`, 403, "egress.filter_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { patternDecider(t, o, tt.pattern) })
			gr, phantom := f.grant(spec(Anthropic))
			req, err := http.NewRequest("POST", f.srv.URL+"/v1/messages", strings.NewReader(
				`{"model":"`+gr.Model+`","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"about `+privateMarker+`"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", phantom)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Anthropic-Version", "2023-06-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("X-Coagent8-Gate-Reason") != tt.wantReason {
				t.Fatalf("got %d %q (%s), want %d %q", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), body, tt.wantStatus, tt.wantReason)
			}
			wantSeen := 0
			if tt.wantStatus == 200 {
				wantSeen = 1
			}
			if got := len(f.anth.Requests()); got != wantSeen {
				t.Errorf("double saw %d requests, want %d", got, wantSeen)
			}
			if tt.wantReason != "" {
				if got := f.settled(gr.ID).Used.Requests; got != 0 {
					t.Errorf("a refused request counted %d against the budget, want 0", got)
				}
			}
		})
	}
}
