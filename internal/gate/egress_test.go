package gate

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// TestNewRequiresEgressDecider: there is no gate that forwards a body
// without an egress decision (issue 10).
func TestNewRequiresEgressDecider(t *testing.T) {
	f := newFixture(t, nil)
	_, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key})
	if !errors.Is(err, ErrNoEgressDecider) || !errors.Is(err, fault.New(fault.InvalidInput, "gate.egress_missing", "")) {
		t.Fatalf("New without Egress: %v, want INVALID_INPUT gate.egress_missing wrapping ErrNoEgressDecider", err)
	}
}

// TestCredentialInBodyRefused: a body carrying a provider-key-shaped
// string is refused by the egress decision (credentials are never
// declassifiable, R-187) before any byte reaches the provider, nothing is
// reserved or resolved, and the refusal is an event from both layers.
func TestCredentialInBodyRefused(t *testing.T) {
	f := newFixture(t, nil)
	gr, phantom := f.grant(spec(Anthropic))
	credential := "sk-ant-api03-" + strings.Repeat("A", 93) + "AA"
	body := `{"model":"` + gr.Model + `","max_tokens":100,"messages":[{"role":"user","content":"use ` + credential + `"}]}`
	req, _ := http.NewRequest("POST", f.srv.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("X-Api-Key", phantom)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := readAll(t, resp)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Coagent8-Gate-Reason") != egress.ReasonCategory {
		t.Fatalf("got %d %q, want 403 %s", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), egress.ReasonCategory)
	}
	if n := len(f.anth.Requests()); n != 0 {
		t.Errorf("provider double received %d requests", n)
	}
	if n := f.secrets.calls.Load(); n != 0 {
		t.Errorf("real credential resolved %d times for a refused body", n)
	}
	if strings.Contains(out, "AAAAAAAA") {
		t.Errorf("refusal echoes the credential: %s", out)
	}
	var refusals []string
	for _, e := range f.events.Events() {
		if e.Type == event.TypeRefusal {
			refusals = append(refusals, e.Rule+" "+e.Reason)
		}
	}
	// One event per refusal: the decider's, never a second from the gate
	// (issue 19 item 14).
	want := []string{"egress.provider-request " + egress.ReasonCategory}
	if diff := cmp.Diff(want, refusals); diff != "" {
		t.Errorf("refusal events (-want +got):\n%s", diff)
	}
	if g := f.settled(gr.ID); g.Used != (Counters{}) {
		t.Errorf("refused request consumed the grant: %+v", g.Used)
	}
}

// TestCustodyRouteBound: every transmission's target binds the custody
// route gate → intermediaries → origin, and a configured intermediary
// changes it (issue 18 scope 5).
func TestCustodyRouteBound(t *testing.T) {
	f := newFixture(t, nil)
	origin := f.gate.origins[Anthropic]
	proxied, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress,
		Upstreams: f.gate.opts.Upstreams, UnsafeAllowLoopbackUpstream: true, Intermediaries: map[Provider]string{Anthropic: "https://egress-proxy.example"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxied.Close() })
	a := &admission{route: routes[0], grant: Grant{Model: "m", Job: "j"}}
	req := httptest.NewRequest("POST", "/v1/messages", nil)
	d := f.gate.transmission(req, a).Target.(egress.PortalTarget)
	p := proxied.transmission(req, a).Target.(egress.PortalTarget)
	if !bytes.Equal(d.CustodyRoute, custodyRoute(nil, origin)) || len(d.CustodyRoute) != 32 {
		t.Errorf("direct custody %x, want the digest of gate -> %s", d.CustodyRoute, origin)
	}
	if bytes.Equal(d.CustodyRoute, p.CustodyRoute) || d.Origin != p.Origin {
		t.Error("an intermediary does not change the custody route (same origin)")
	}
}
