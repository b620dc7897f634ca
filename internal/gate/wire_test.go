package gate

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/providertest"
)

// privateMarker is content a pattern label classifies as confidential.
const privateMarker = "PROJECT-NIGHTJAR"

// labelledDecider is the production decider under a policy with one
// pattern label (weight 0.6, above the 0.3 portal threshold).
func labelledDecider(t *testing.T, o *Options) { patternDecider(t, o, privateMarker) }

// patternDecider is labelledDecider with pattern as the label's pattern.
func patternDecider(t *testing.T, o *Options, pattern string) {
	t.Helper()
	c := egress.DefaultConfig()
	c.Labels = []egress.LabelConfig{{Name: "deal", Patterns: []string{pattern}, Classification: 0.6, Category: egress.Confidential}}
	pol, err := egress.NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	installDecider(t, o, pol)
}

// upstreamHeaders are the header names the double may ever see for an
// Anthropic request: the allowlist, the injected credential and what
// net/http itself writes.
var upstreamHeaders = append([]string{"Accept-Encoding", "Content-Length", "X-Api-Key"}, anthropicHeaders...)

// TestWireIsBuiltFromTheAllowlist: client headers outside the route's
// allowlist — an exfiltration header with labelled content, a cookie,
// unknown beta flags, a session id, forwarding metadata — never reach the
// provider, and the decision record names what was forwarded and what
// was dropped (issue 18 scope 1).
func TestWireIsBuiltFromTheAllowlist(t *testing.T) {
	f := newFixture(t, func(o *Options) { labelledDecider(t, o) })
	gr, phantom := f.grant(spec(Anthropic))
	req := anthropicRequest(t, f, phantom, gr.Model)
	req.Header.Set("X-Exfil", privateMarker+" valuation 41.7M")
	req.Header.Set("Cookie", "session=abc123")
	req.Header.Set("X-Unknown-Beta", "feature-2099")
	req.Header.Set("Openai-Beta", "responses=v1")
	req.Header.Set("X-Claude-Code-Session-Id", "sess-42")
	req.Header.Set("X-Forwarded-For", "10.0.0.1")
	req.Header.Set("Anthropic-Beta", "fine-grained-tool-streaming-2025-05-14")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	got := headerNames(t, f.anth.Requests())
	want := []string{"Accept-Encoding", "Anthropic-Beta", "Anthropic-Version", "Content-Length", "Content-Type", "X-Api-Key"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers upstream (-want +got):\n%s", diff)
	}
	for _, name := range got {
		if !slices.Contains(upstreamHeaders, name) {
			t.Errorf("header %s reached the double", name)
		}
	}
	wantRecord := "forwarded=accept-encoding,anthropic-beta,anthropic-version,content-type,x-api-key " +
		"dropped=accept-encoding,content-length,cookie,openai-beta,user-agent,x-api-key,x-claude-code-session-id,x-exfil,x-forwarded-for,x-unknown-beta"
	if !slices.ContainsFunc(f.events.Events(), func(e event.Event) bool {
		return e.Reason == egress.ReasonRaw && strings.HasPrefix(e.Detail, wantRecord+" custody=gate>")
	}) {
		t.Errorf("no egress decision recording %q; events %+v", wantRecord, f.events.Events())
	}
}

// TestForwardedHeaderIsDecided: a header inside the allowlist is decided
// like the body: a credential format or labelled content in it refuses
// the request before any byte leaves.
func TestForwardedHeaderIsDecided(t *testing.T) {
	tests := []struct {
		name, header, value, reason string
	}{
		{"credential in anthropic-beta", "Anthropic-Beta", "ghp_" + strings.Repeat("a", 36), egress.ReasonCategory},
		{"labelled content in anthropic-beta", "Anthropic-Beta", "x-" + privateMarker, egress.ReasonHeader},
		{"provider key in anthropic-version", "Anthropic-Version", realKey(OpenAI), egress.ReasonCategory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { labelledDecider(t, o) })
			gr, phantom := f.grant(spec(Anthropic))
			req := anthropicRequest(t, f, phantom, gr.Model)
			req.Header.Set(tt.header, tt.value)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			if got := resp.Header.Get("X-Coagent8-Gate-Reason"); got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
			if n := len(f.anth.Requests()); n != 0 {
				t.Errorf("double saw %d requests, want 0", n)
			}
			if n := f.secrets.calls.Load(); n != 0 {
				t.Errorf("secret resolved %d times for a refused request", n)
			}
		})
	}
}

// TestBadInputRefusedBeforeAnyByte: malformed, duplicate or folded
// credential headers, oversized header blocks and bodies that are not the
// route's JSON are refused with their reason in X-Coagent8-Gate-Reason,
// counted and recorded; nothing reaches the provider.
func TestBadInputRefusedBeforeAnyByte(t *testing.T) {
	f := newFixture(t, nil)
	gr, phantom := f.grant(spec(Anthropic))
	body := `{"model":"` + gr.Model + `","max_tokens":10}`
	head := "POST /v1/messages HTTP/1.1\r\nHost: gate\r\nContent-Type: application/json\r\n"
	tail := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	tests := []struct {
		name, raw  string
		wantStatus int
		wantReason string
	}{
		{"duplicate x-api-key", head + "X-Api-Key: " + phantom + "\r\nX-Api-Key: " + phantom + "\r\n" + tail, 401, ReasonDuplicateCredential},
		{"x-api-key and proxy-authorization", head + "X-Api-Key: " + phantom + "\r\nProxy-Authorization: Basic eA==\r\n" + tail, 401, ReasonDuplicateCredential},
		{"folded x-api-key", head + "X-Api-Key: " + phantom + "\r\n  trailing\r\n" + tail, 400, ReasonHeaderForm},
		{"non-bearer authorization", head + "Authorization: Basic eA==\r\n" + tail, 400, ReasonHeaderForm},
		{"repeated anthropic-version", head + "X-Api-Key: " + phantom + "\r\nAnthropic-Version: 2023-06-01\r\nAnthropic-Version: 2023-01-01\r\n" + tail, 400, ReasonHeaderForm},
		{"non-ascii anthropic-beta", head + "X-Api-Key: " + phantom + "\r\nAnthropic-Beta: caf\xc3\xa9\r\n" + tail, 400, ReasonHeaderForm},
		{"oversized header block", head + "X-Api-Key: " + phantom + "\r\nX-Pad: " + strings.Repeat("p", 40<<10) + "\r\n" + tail, 431, ReasonHeaderSize},
		{"query parameter outside the route's", strings.Replace(head, "/v1/messages", "/v1/messages?beta=true&x=exfil", 1) + "X-Api-Key: " + phantom + "\r\n" + tail, 400, ReasonQuery},
		{"repeated query parameter", strings.Replace(head, "/v1/messages", "/v1/messages?beta=true&beta=false", 1) + "X-Api-Key: " + phantom + "\r\n" + tail, 400, ReasonQuery},
		{"query value not a token", strings.Replace(head, "/v1/messages", "/v1/messages?beta=a%20b", 1) + "X-Api-Key: " + phantom + "\r\n" + tail, 400, ReasonQuery},
		{"body not json", head + "X-Api-Key: " + phantom + "\r\nContent-Length: 7\r\n\r\nmodel=x", 400, ReasonBody},
		{"body is a json array", head + "X-Api-Key: " + phantom + "\r\nContent-Length: 2\r\n\r\n[]", 400, ReasonBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.gate.Refusals()[tt.wantReason]
			events := len(f.events.Events())
			resp := rawRequest(t, f.srv.Listener.Addr().String(), tt.raw)
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("X-Coagent8-Gate-Reason") != tt.wantReason {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), tt.wantStatus, tt.wantReason)
			}
			if got := f.gate.Refusals()[tt.wantReason] - before; got != 1 {
				t.Errorf("refusal count for %s grew by %d, want 1", tt.wantReason, got)
			}
			evs := f.events.Events()[events:]
			if len(evs) != 1 || evs[0].Reason != tt.wantReason || evs[0].Code != "POLICY_DENIED" {
				t.Errorf("events %+v, want one refusal %q", evs, tt.wantReason)
			}
		})
	}
	if n := len(f.anth.Requests()); n != 0 {
		t.Errorf("double saw %d requests, want 0", n)
	}
	if n := f.secrets.calls.Load(); n != 0 {
		t.Errorf("secret resolved %d times, want 0", n)
	}
}

// anthropicRequest is a small admitted Messages request.
func anthropicRequest(t *testing.T, f *fixture, phantom, model string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("POST", f.srv.URL+"/v1/messages?beta=true",
		strings.NewReader(`{"model":"`+model+`","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", phantom)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	return req
}

// rawRequest writes raw to addr and reads one response: for requests
// net/http's client refuses to send.
func rawRequest(t *testing.T, addr, raw string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	return resp
}

// headerNames returns the sorted header names of the one request a double
// saw; it fails t when it saw another number.
func headerNames(t *testing.T, reqs []providertest.Request) []string {
	t.Helper()
	if len(reqs) != 1 {
		t.Fatalf("double saw %d requests, want 1", len(reqs))
	}
	var got []string
	for name := range reqs[0].Header {
		got = append(got, name)
	}
	slices.Sort(got)
	return got
}
