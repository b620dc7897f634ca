package gate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestUpstreamRedirectWithheld: a provider API never redirects, and a
// client follows a redirect by itself (fetch and the SDKs re-send the
// body, and x-api-key, which only Authorization-stripping spares, to the
// Location). A 3xx from the upstream was passed on with its Location: a
// hostile upstream steered the agent's request — the phantom credential
// and the whole body — to any URL it named, or back to an unadmitted
// route of the gate, which then revoked the job's grants (red team rt5).
// It is now an upstream error (502, upstream.error) without Location, and
// the grant stays live.
func TestUpstreamRedirectWithheld(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		for _, loc := range []string{"http://127.0.0.1:1/steal", "/v1/models"} {
			t.Run(strconv.Itoa(code)+" "+loc, func(t *testing.T) {
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Location", loc)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(code)
					w.Write([]byte(`{}`))
				}))
				t.Cleanup(up.Close)
				f := newFixture(t, func(o *Options) { o.Upstreams[Anthropic] = up.URL })
				gr, phantom := f.grant(spec(Anthropic))
				follows := false
				client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
					follows = true
					return http.ErrUseLastResponse
				}}
				resp, err := client.Do(anthropicRequest(t, f, phantom, gr.Model))
				if err != nil {
					t.Fatal(err)
				}
				body := readAll(t, resp)
				if resp.StatusCode != 502 || resp.Header.Get("X-Coagent8-Gate-Reason") != ReasonUpstream {
					t.Errorf("got %d %q, want 502 %s (%s)", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), ReasonUpstream, body)
				}
				if follows || resp.Header.Get("Location") != "" || strings.Contains(body, loc) {
					t.Errorf("the redirect reached the client: Location %q, body %s", resp.Header.Get("Location"), body)
				}
				if g, _ := f.gate.Inspect(context.Background(), gr.ID); g.State != Live {
					t.Errorf("grant %s, want live", g.State)
				}
			})
		}
	}
}
