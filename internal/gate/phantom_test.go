package gate

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/redact"
)

// TestPhantomRedacted: every phantom the gate mints is a credential format
// to internal/redact, which keeps its own copy of the format ("c8g_" and
// 43 base64url characters; redact cannot import gate). Minted phantoms are
// replaced whole by both profiles, in running text and at its end, so the
// two definitions cannot drift apart unnoticed.
func TestPhantomRedacted(t *testing.T) {
	marker := redact.KindPhantom.Marker()
	for _, r := range []*redact.Redactor{redact.NewAnswer(), redact.NewDiagnostic("")} {
		for range 200 {
			p := newPhantom().Reveal()
			if !strings.HasPrefix(p, PhantomPrefix) {
				t.Fatalf("newPhantom() = %q, want prefix %q", p, PhantomPrefix)
			}
			for _, tt := range []struct{ in, want string }{
				{p, marker},
				{"grant phantom " + p + ", live", "grant phantom " + marker + ", live"},
				{"x-api-key: " + p + "\n", "x-api-key: " + marker + "\n"},
			} {
				if got := r.String(tt.in); got != tt.want {
					t.Errorf("%v String(%q) = %q, want %q", r.Profile(), tt.in, got, tt.want)
				}
			}
		}
	}
}

// TestOwnPhantomInTrafficPasses: a delegated agent that prints its
// environment sends its phantom in the next request body, and the model
// may repeat it. The provider cannot reach the gate to use it, so the
// gate's traffic checks (redact.NewTraffic) do not treat it as a
// credential: the request is admitted and forwarded byte for byte, the
// answer that repeats it reaches the client, and nothing is contained.
func TestOwnPhantomInTrafficPasses(t *testing.T) {
	for _, p := range []Provider{Anthropic, OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			f := newFixture(t, nil)
			gr, phantom := f.grant(spec(p))
			echo := "your key is " + phantom + " (from env)"
			f.anth.Script(providertest.Reply{Text: echo})
			f.oai.Script(providertest.Reply{Text: echo})
			body := `{"model":"` + gr.Model + `","max_tokens":10,"messages":[{"role":"user","content":"ANTHROPIC_API_KEY=` + phantom + `"}]}`
			if p == OpenAI {
				body = `{"model":"` + gr.Model + `","max_output_tokens":10,"input":"OPENAI_API_KEY=` + phantom + `"}`
			}
			if reason, status := sendBody(t, f, p, phantom, body); reason != "" || status != 200 {
				t.Fatalf("request with the agent's own phantom in its body: reason %q, status %d; want admitted", reason, status)
			}
			reqs := append(f.anth.Requests(), f.oai.Requests()...)
			if len(reqs) != 1 || string(reqs[0].Body) != body {
				t.Fatalf("upstream saw %d requests; want the body forwarded unchanged", len(reqs))
			}
			answer := readAll(t, f.call(p, phantom, gr.Model, true))
			if !strings.Contains(answer, phantom) {
				t.Errorf("answer repeating the phantom was withheld or changed:\n%s", answer)
			}
			for _, e := range f.events.Events() {
				if e.Type == TypeCompromise || e.Reason == ReasonEcho {
					t.Errorf("event %s %s recorded for the agent's own phantom", e.Type, e.Reason)
				}
			}
		})
	}
}
