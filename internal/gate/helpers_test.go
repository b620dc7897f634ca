package gate

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	egressledger "github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/store"
)

// realKey is a synthetic provider key assembled at run time (the canary).
func realKey(p Provider) string {
	if p == OpenAI {
		return "sk-proj-" + strings.Repeat("Z", 24) + "canary" + strings.Repeat("9", 12)
	}
	return "sk-ant-api03-" + strings.Repeat("Y", 24) + "canary" + strings.Repeat("7", 12)
}

// spyResolver counts resolutions (R-126: exactly one per admitted request).
type spyResolver struct {
	res   secret.Resolver
	calls atomic.Int64
}

func (s *spyResolver) Resolve(r secret.Ref) (secret.Value, error) {
	s.calls.Add(1)
	return s.res.Resolve(r)
}

// fixture is a gate in front of both provider doubles.
type fixture struct {
	t       testing.TB
	gate    *Gate
	srv     *httptest.Server
	anth    *providertest.Anthropic
	oai     *providertest.OpenAI
	events  *event.Memory
	secrets *spyResolver
	db      *store.DB
	dir     string
	egress  *egress.Decider
}

func newFixture(t testing.TB, mod func(*Options)) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, events: &event.Memory{},
		anth: providertest.NewAnthropic(t, providertest.Options{}),
		oai:  providertest.NewOpenAI(t, providertest.Options{})}
	f.secrets = &spyResolver{res: secret.Resolver{Env: config.FromList([]string{
		"REAL_ANTHROPIC=" + realKey(Anthropic), "REAL_OPENAI=" + realKey(OpenAI)})}}
	// The default busy timeout, as `coagent8 gate serve` uses: the gate's
	// own writes queue on its writer lock, not on SQLite's busy handler.
	db, err := store.Open(context.Background(), filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	key, err := LoadKey(filepath.Join(dir, "gate.key"))
	if err != nil {
		t.Fatal(err)
	}
	f.egress = newDecider(t, db, dir, f.events)
	anthRef, _ := secret.ParseRef("env:REAL_ANTHROPIC")
	oaiRef, _ := secret.ParseRef("env:REAL_OPENAI")
	opts := Options{DB: db, Key: key, Secrets: f.secrets, Credentials: map[Provider]secret.Ref{Anthropic: anthRef, OpenAI: oaiRef}, Events: f.events, Redactor: redact.NewDiagnostic(""), Egress: f.egress,
		Upstreams:                   map[Provider]string{Anthropic: f.anth.URL(), OpenAI: f.oai.URL()},
		UnsafeAllowLoopbackUpstream: true, WatchInterval: 50 * time.Millisecond, DrainTimeout: 10 * time.Second}
	if mod != nil {
		mod(&opts)
	}
	g, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f.gate = g
	f.srv = httptest.NewServer(g)
	t.Cleanup(f.srv.Close)
	return f
}

// newDecider is the egress decider the shipped command builds when
// config.json has no egress section: the built-in policy over a ledger in
// db, so every test request is decided as in production.
func newDecider(t testing.TB, db *store.DB, dir string, events event.Sink) *egress.Decider {
	t.Helper()
	pol, err := egress.NewPolicy(egress.DefaultConfig())
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

// spec is a generous grant for provider p; tests tighten what they need.
func spec(p Provider) Spec {
	ref, _ := secret.ParseRef("env:REAL_ANTHROPIC")
	model := "claude-sonnet-4-5"
	if p == OpenAI {
		ref, _ = secret.ParseRef("env:REAL_OPENAI")
		model = "gpt-5.1"
	}
	return Spec{Provider: p, Model: model, Job: "job-1", TTL: time.Hour, Secret: ref,
		MaxRequests: 1000, MaxTokens: 100_000_000, MaxSpend: USD(1000),
		Price: &Price{InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3.75, CacheReadPerMTok: 0.3}}
}

func (f *fixture) grant(s Spec) (Grant, string) {
	f.t.Helper()
	g, phantom, err := f.gate.Grant(context.Background(), s)
	if err != nil {
		f.t.Fatal(err)
	}
	return g, phantom.Reveal()
}

// call sends a model request with the credential in the provider's header.
func (f *fixture) call(p Provider, cred, model string, stream bool) *http.Response {
	f.t.Helper()
	path, hdr := "/v1/messages?beta=true", "X-Api-Key"
	if p == OpenAI {
		path, hdr = "/v1/responses", "Authorization"
		cred = "Bearer " + cred
	}
	body := `{"model":"` + model + `","max_tokens":1000,"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
	req, _ := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(body))
	req.Header.Set(hdr, cred)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

// inspect waits until grant id has no open reservation and returns it.
func (f *fixture) settled(id string) Grant {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, err := f.gate.Inspect(context.Background(), id)
		if err != nil {
			f.t.Fatal(err)
		}
		if g.Reserved == (Counters{}) || time.Now().After(deadline) {
			f.gate.settling.Wait() // the settlement event is recorded after the row
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reasons lists the recorded event reasons.
func (f *fixture) reasons() []string {
	var out []string
	for _, e := range f.events.Events() {
		out = append(out, e.Reason)
	}
	return out
}
