package gate

import (
	"net/http"
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { labelledDecider(t, o) })
			_, phantom := f.grant(spec(OpenAI))
			req, _ := http.NewRequest("GET", f.srv.URL+"/v1/models"+tt.query, nil)
			req.Header.Set("Authorization", "Bearer "+phantom)
			req.Header.Set("Accept", tt.accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			if got := resp.Header.Get("X-Coagent8-Gate-Reason"); got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
			if tt.reason == "" {
				reqs := f.oai.Requests()
				if len(reqs) != 1 {
					t.Fatalf("double saw %d requests, want 1", len(reqs))
				}
				var got []string
				for name := range reqs[0].Header {
					got = append(got, name)
				}
				slices.Sort(got)
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
