package gate

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coagent8/coagent8/internal/egress"
	egressledger "github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/store"
)

// forwardProxy is a real HTTP forward proxy on 127.0.0.1: it receives
// absolute-form requests (RFC 9112 §3.2.2), sends them on to their
// origin without any proxy and streams the answer back. It records the
// origins it forwarded to.
type forwardProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newForwardProxy(t *testing.T) *forwardProxy {
	t.Helper()
	p := &forwardProxy{}
	tr := &http.Transport{Proxy: nil}
	t.Cleanup(tr.CloseIdleConnections)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host == "" { // origin-form: not a proxy request
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.seen = append(p.seen, r.URL.Scheme+"://"+r.URL.Host)
		p.mu.Unlock()
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
		out.Header = r.Header.Clone()
		out.Header.Del("Proxy-Connection")
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *forwardProxy) origins() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// deciderWith is [newDecider] under an egress configuration edited by mod.
func deciderWith(t *testing.T, db *store.DB, dir string, events event.Sink, mod func(*egress.Config)) *egress.Decider {
	t.Helper()
	c := egress.DefaultConfig()
	mod(&c)
	pol, err := egress.NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	led, err := egressledger.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := evidence.LoadKey(filepath.Join(dir, "evidence.key"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := egress.New(egress.Options{Policy: pol, Ledger: led, Key: key, Events: events, Principal: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestIntermediaryRoute: a provider's configured intermediary is on the
// wire — the request reaches the provider double through a real forward
// proxy on 127.0.0.1 — and the egress decision record names the custody
// route gate > proxy > origin. A policy that requires a recipient fact
// the configuration does not state for the intermediary refuses with
// egress.unknown_recipient_fact before any byte reaches the proxy; once
// the fact is stated the same request goes through (issue 18 scope 5).
func TestIntermediaryRoute(t *testing.T) {
	no, zero := false, 0
	tests := []struct {
		name      string
		facts     map[string]egress.RecipientFacts // intermediaries' facts; the key "PROXY" stands for the proxy's origin
		requires  *egress.RecipientRequirements
		wantCode  int
		wantProxy int
	}{
		{"no requirement", nil, nil, http.StatusOK, 1},
		{"requirement, intermediary unstated", nil, &egress.RecipientRequirements{NoTraining: true}, http.StatusForbidden, 0},
		{"requirement, intermediary stated", map[string]egress.RecipientFacts{"PROXY": {TrainingUse: &no}}, &egress.RecipientRequirements{NoTraining: true}, http.StatusOK, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := newForwardProxy(t)
			f := newFixture(t, func(o *Options) {
				o.Intermediaries = map[Provider]string{Anthropic: proxy.srv.URL}
				o.Egress = deciderWith(t, o.DB, t.TempDir(), o.Events, func(c *egress.Config) {
					c.Recipients = map[string]egress.RecipientFacts{"anthropic": {RetentionDays: &zero, TrainingUse: &no}}
					c.Requires = tt.requires
					c.Intermediaries = map[string]egress.RecipientFacts{}
					for k, v := range tt.facts {
						c.Intermediaries[strings.Replace(k, "PROXY", proxy.srv.URL, 1)] = v
					}
				})
			})
			gr, phantom := f.grant(spec(Anthropic))
			resp := f.call(Anthropic, phantom, gr.Model, true)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), tt.wantCode)
			}
			if got := len(proxy.origins()); got != tt.wantProxy {
				t.Errorf("proxy forwarded %d requests, want %d", got, tt.wantProxy)
			}
			if got, want := len(f.anth.Requests()), tt.wantProxy; got != want {
				t.Errorf("double received %d requests, want %d", got, want)
			}
			for _, o := range proxy.origins() {
				if o != f.anth.URL() {
					t.Errorf("proxy forwarded to %s, want the double %s", o, f.anth.URL())
				}
			}
			route := "custody=gate>" + proxy.srv.URL + ">" + f.anth.URL()
			var named bool
			for _, e := range f.events.Events() {
				if strings.HasPrefix(e.Rule, "egress.") && strings.Contains(e.Detail, route) {
					named = true
					if tt.wantCode == http.StatusForbidden && e.Reason != egress.ReasonUnknownFact {
						t.Errorf("refusal reason %q, want %s", e.Reason, egress.ReasonUnknownFact)
					}
				}
			}
			if !named {
				t.Errorf("no egress decision record names %q", route)
			}
			if tt.wantCode == http.StatusForbidden && resp.Header.Get("X-Coagent8-Gate-Reason") != egress.ReasonUnknownFact {
				t.Errorf("reason %q, want %s", resp.Header.Get("X-Coagent8-Gate-Reason"), egress.ReasonUnknownFact)
			}
		})
	}
}

// TestIntermediaryValidated: an intermediary is an http(s) origin without
// user info for a known provider, and needs a transport the gate can
// route (gate.intermediary).
func TestIntermediaryValidated(t *testing.T) {
	f := newFixture(t, nil)
	for name, mod := range map[string]func(*Options){
		"unknown provider": func(o *Options) { o.Intermediaries = map[Provider]string{"gemini": "https://relay.example"} },
		"user info":        func(o *Options) { o.Intermediaries = map[Provider]string{Anthropic: "https://u:p@relay.example"} },
		"path":             func(o *Options) { o.Intermediaries = map[Provider]string{Anthropic: "https://relay.example/x"} },
		"socks":            func(o *Options) { o.Intermediaries = map[Provider]string{Anthropic: "socks5://relay.example"} },
		"foreign transport": func(o *Options) {
			o.Intermediaries = map[Provider]string{Anthropic: "https://relay.example"}
			o.Transport = roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, io.EOF })
		},
	} {
		opts := Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress, Upstreams: f.gate.opts.Upstreams, UnsafeAllowLoopbackUpstream: true}
		mod(&opts)
		g, err := New(context.Background(), opts)
		if err == nil {
			g.Close()
			t.Errorf("%s: accepted", name)
			continue
		}
		if !errors.Is(err, fault.New(fault.InvalidInput, "gate.intermediary", "")) {
			t.Errorf("%s: %v, want a gate.intermediary refusal", name, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
