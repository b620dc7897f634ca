package gate

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDenials covers one fixture per denial condition: each is
// refused with its reason, nothing reaches the provider and the real
// credential is never resolved.
func TestDenials(t *testing.T) {
	f := newFixture(t, nil)
	gr, phantom := f.grant(spec(Anthropic))
	_, oaiPhantom := f.grant(spec(OpenAI))
	_, revoked := f.grant(spec(Anthropic))
	revokedID := f.events.Events()[len(f.events.Events())-1].IDs["grant"]
	if err := f.gate.Revoke(context.Background(), revokedID); err != nil {
		t.Fatal(err)
	}
	short := spec(Anthropic)
	short.TTL = time.Millisecond
	_, expired := f.grant(short)
	tiny := spec(Anthropic)
	tiny.MaxTokens, tiny.OutputCeiling = 10, 1 // covers the smallest reservation, not this body's
	_, tinyTok := f.grant(tiny)
	poor := spec(Anthropic)
	poor.MaxSpend, poor.OutputCeiling = USD(0.00002), 1 // covers the smallest reservation, not this body's
	_, poorSpend := f.grant(poor)
	// Route refusals with a live phantom are containment signals that
	// revoke the whole job (TestContainmentSignals): they use a job of
	// their own.
	routeSpec := spec(Anthropic)
	routeSpec.Job = "job-route"
	_, routePhantom := f.grant(routeSpec)
	time.Sleep(5 * time.Millisecond)
	body := `{"model":"` + gr.Model + `","max_tokens":10,"stream":true}`

	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		wantStatus               int
		wantReason               string
	}{
		{"websocket upgrade", "GET", "/v1/responses", "", map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Authorization": "Bearer " + oaiPhantom}, 403, ReasonUpgrade},
		{"path outside allowlist", "POST", "/v1/complete", body, map[string]string{"X-Api-Key": routePhantom}, 404, ReasonRoute},
		{"GET on admitted path", "GET", "/v1/messages", "", map[string]string{"X-Api-Key": routePhantom}, 404, ReasonRoute},
		{"encoded path", "POST", "/v1/%6Dessages", body, map[string]string{"X-Api-Key": routePhantom}, 403, ReasonPathForm},
		{"dot segment", "POST", "/v1/x/../messages", body, map[string]string{"X-Api-Key": routePhantom}, 403, ReasonPathForm},
		{"no credential", "POST", "/v1/messages", body, nil, 401, ReasonNoCredential},
		{"two credentials", "POST", "/v1/messages", body, map[string]string{"X-Api-Key": phantom, "Authorization": "Bearer other"}, 401, ReasonAmbiguous},
		{"real key instead of phantom", "POST", "/v1/messages", body, map[string]string{"X-Api-Key": realKey(Anthropic)}, 401, ReasonRealKey},
		{"unknown phantom", "POST", "/v1/messages", body, map[string]string{"X-Api-Key": PhantomPrefix + "nope"}, 401, ReasonUnknownGrant},
		{"wrong provider", "POST", "/v1/responses", `{"model":"gpt-5.1"}`, map[string]string{"Authorization": "Bearer " + phantom}, 403, ReasonProvider},
		{"wrong model in body", "POST", "/v1/messages", `{"model":"claude-opus-4-1","max_tokens":10}`, map[string]string{"X-Api-Key": phantom}, 403, ReasonModel},
		{"not json", "POST", "/v1/messages", `model=x`, map[string]string{"X-Api-Key": phantom}, 400, ReasonBody},
		{"revoked", "POST", "/v1/messages", body, map[string]string{"X-Api-Key": revoked}, 403, ReasonRevoked},
		{"expired", "POST", "/v1/messages", body, map[string]string{"X-Api-Key": expired}, 403, ReasonExpired},
		{"request above token budget", "POST", "/v1/messages", body, map[string]string{"X-Api-Key": tinyTok}, 402, ReasonRequestTokens},
		{"request above spend budget", "POST", "/v1/messages", body, map[string]string{"X-Api-Key": poorSpend}, 402, ReasonRequestSpend},
		{"count_tokens on revoked", "POST", "/v1/messages/count_tokens", body, map[string]string{"X-Api-Key": revoked}, 403, ReasonRevoked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.anth.Requests()) + len(f.oai.Requests())
			events := len(f.events.Events())
			req, _ := http.NewRequest(tt.method, f.srv.URL+tt.path, strings.NewReader(tt.body))
			for k, v := range tt.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("X-Coagent8-Gate-Reason") != tt.wantReason {
				t.Errorf("got %d %q, want %d %q (body %s)", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), tt.wantStatus, tt.wantReason, body)
			}
			if !strings.Contains(body, tt.wantReason) {
				t.Errorf("body %q lacks the reason", body)
			}
			if after := len(f.anth.Requests()) + len(f.oai.Requests()); after != before {
				t.Errorf("denied request reached the provider")
			}
			first := f.events.Events()[events]
			if first.Reason != tt.wantReason || first.Code != "POLICY_DENIED" {
				t.Errorf("event %+v, want refusal %q", first, tt.wantReason)
			}
		})
	}
	if n := f.secrets.calls.Load(); n != 0 {
		t.Errorf("secret resolved %d times on denied requests, want 0", n)
	}
}

func TestRealKeyEventDoesNotPrintIt(t *testing.T) {
	f := newFixture(t, nil)
	f.call(Anthropic, realKey(Anthropic), "claude-sonnet-4-5", true).Body.Close()
	e := f.events.Events()[0]
	if e.Reason != ReasonRealKey || !strings.Contains(e.Detail, "provider API key") {
		t.Errorf("event %+v", e)
	}
	if strings.Contains(e.Detail+e.Reason+e.Rule, "canary") {
		t.Errorf("event prints the key")
	}
}

func TestRequestBudgetAndUnmeteredRoutes(t *testing.T) {
	f := newFixture(t, nil)
	s := spec(Anthropic)
	s.MaxRequests = 1
	gr, phantom := f.grant(s)
	hello, _ := http.NewRequest("HEAD", f.srv.URL+"/api/hello", nil)
	if resp, err := http.DefaultClient.Do(hello); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /api/hello: %v %v", resp, err)
	}
	req, _ := http.NewRequest("POST", f.srv.URL+"/v1/messages/count_tokens?beta=true", strings.NewReader(`{"model":"`+gr.Model+`"}`))
	req.Header.Set("X-Api-Key", phantom)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || readAll(t, resp) != `{"input_tokens":42}` {
		t.Fatalf("count_tokens: %v", err)
	}
	readAll(t, f.call(Anthropic, phantom, gr.Model, true))
	resp = f.call(Anthropic, phantom, gr.Model, true)
	readAll(t, resp)
	if resp.StatusCode != 402 || resp.Header.Get("X-Coagent8-Gate-Reason") != ReasonBudgetRequests {
		t.Errorf("second call: %d %q", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"))
	}
	if got := f.settled(gr.ID).Used.Requests; got != 1 {
		t.Errorf("requests = %d, want 1 (count_tokens unmetered)", got)
	}
	for _, r := range f.anth.Requests() {
		if r.Path == "/api/hello" {
			t.Errorf("hello probe was forwarded")
		}
	}
}
