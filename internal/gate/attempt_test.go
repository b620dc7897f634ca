package gate

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/store"
)

// TestAttemptStates: each upstream attempt has its own record (issue 18
// scope 4): completed when a response came back, not_sent (charged no
// tokens or USD) when no byte was written, uncertain (charged its full
// reservation) when the connection was lost after the first byte. Every
// attempt, not_sent included, used one request of the grant's budget and
// one disclosure use: both are taken at admission, with its egress
// decision, before the gate knows whether the provider can be reached.
func TestAttemptStates(t *testing.T) {
	tests := []struct {
		name        string
		reply       providertest.Reply
		deadUp      bool // the upstream port refuses connections
		want        AttemptState
		wantOutcome Outcome
		wantCharged string // "none", "reservation" or "usage"
	}{
		{"clean stream", providertest.Reply{Chunks: 3}, false, AttemptCompleted, OutcomeUsage, "usage"},
		{"upstream error status", providertest.Reply{Status: 500, Body: `{}`}, false, AttemptCompleted, OutcomeUpstream, "none"},
		{"dies after the first byte", providertest.Reply{Chunks: 6, DropAfterEvents: 2}, false, AttemptUncertain, OutcomeLost, "reservation"},
		{"dies after reading the request", providertest.Reply{DropBeforeAnswer: true}, false, AttemptUncertain, OutcomeLost, "reservation"},
		{"connection refused", providertest.Reply{}, true, AttemptNotSent, OutcomeNotSent, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) {
				if tt.deadUp {
					o.Upstreams[Anthropic] = deadOrigin(t)
				}
			})
			f.anth.Script(tt.reply)
			gr, phantom := f.grant(spec(Anthropic))
			resp := f.call(Anthropic, phantom, gr.Model, true)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			g := f.settled(gr.ID)
			as := attempts(t, f, gr.ID)
			if len(as) != 1 {
				t.Fatalf("%d attempts, want 1", len(as))
			}
			a := as[0]
			if a.State != tt.want || a.Outcome != tt.wantOutcome {
				t.Errorf("attempt %s/%s, want %s/%s", a.State, a.Outcome, tt.want, tt.wantOutcome)
			}
			if !strings.HasPrefix(a.Decision, "ed1:") {
				t.Errorf("attempt decision %q, want an evidence digest", a.Decision)
			}
			if sent := !a.Sent.IsZero(); sent != (tt.want != AttemptNotSent) {
				t.Errorf("sent at %v for a %s attempt", a.Sent, a.State)
			}
			want := map[string]Amount{"none": {}, "reservation": a.Reserved}[tt.wantCharged]
			if tt.wantCharged != "usage" && a.Charged != want {
				t.Errorf("charged %+v, want %s %+v", a.Charged, tt.wantCharged, want)
			}
			if tt.wantCharged == "usage" && (a.Charged.Tokens == 0 || a.Charged.Tokens >= a.Reserved.Tokens) {
				t.Errorf("charged %+v, want the reported usage", a.Charged)
			}
			if g.Used.Tokens != a.Charged.Tokens {
				t.Errorf("grant used %d tokens, attempt charged %d", g.Used.Tokens, a.Charged.Tokens)
			}
			if uses := disclosureUses(t, f); g.Used.Requests != 1 || uses != 1 {
				t.Errorf("grant used %d requests, egress %d uses; want 1 and 1 (taken at admission)", g.Used.Requests, uses)
			}
		})
	}
}

// TestRetryIsANewAttempt: a client retry of identical bytes after an
// uncertain attempt is a second attempt with its own, fresh decision;
// both are charged (seed 001: every actual transmission settles a fresh
// decision; an uncertain effect never silently becomes a new attempt).
func TestRetryIsANewAttempt(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 6, DropAfterEvents: 2})
	gr, phantom := f.grant(spec(Anthropic))
	for range 2 {
		resp := f.call(Anthropic, phantom, gr.Model, true)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	g := f.settled(gr.ID)
	as := attempts(t, f, gr.ID)
	if len(as) != 2 || as[0].Decision == as[1].Decision || as[0].ID == as[1].ID {
		t.Fatalf("attempts %+v, want two with distinct decisions", as)
	}
	for _, a := range as {
		if a.State != AttemptUncertain || a.Charged != a.Reserved {
			t.Errorf("attempt %+v, want uncertain and charged in full", a)
		}
	}
	if want := as[0].Charged.Spend + as[1].Charged.Spend; g.Used.Spend != want || g.Used.Requests != 2 {
		t.Errorf("grant used %+v, want 2 requests and %d nano-USD", g.Used, want)
	}
	if n := disclosureUses(t, f); n != 2 {
		t.Errorf("egress uses %d, want 2 (one decision per transmission)", n)
	}
}

// TestConcurrentRetriesNeverOverspend: 200 concurrent retries against an
// upstream that dies after the first byte of each: every admitted
// attempt is uncertain and charged in full, and the spend budget is
// never exceeded.
func TestConcurrentRetriesNeverOverspend(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 4, DropAfterEvents: 2})
	s := spec(Anthropic)
	bodyLen := len(`{"model":"`+s.Model+`","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"`) + 2000 + len(`"}]}`)
	one := reservation(bodyLen, 1000, *s.Price)
	s.MaxSpend, s.OutputCeiling = one.Spend*20+one.Spend/2, 1000
	gr, phantom := f.grant(s)
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			resp := f.call(Anthropic, phantom, s.Model, true)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	g := f.settled(gr.ID)
	if g.Used.Spend > s.MaxSpend {
		t.Errorf("spent %d > budget %d", g.Used.Spend, s.MaxSpend)
	}
	as := attempts(t, f, gr.ID)
	if len(as) != 20 || g.Used.Requests != 20 {
		t.Errorf("%d attempts, %d requests; want 20 (the budget's worth)", len(as), g.Used.Requests)
	}
	for _, a := range as {
		if a.State != AttemptUncertain || a.Charged != a.Reserved {
			t.Errorf("attempt %+v, want uncertain and charged in full", a)
		}
	}
}

func attempts(t *testing.T, f *fixture, id string) []Attempt {
	t.Helper()
	as, err := f.gate.Attempts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// deadOrigin is an http origin on 127.0.0.1 where nothing listens.
func deadOrigin(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// TestUnmeteredAttempts: token counting has its own attempt row with its
// decision, reserving and charging nothing and consuming no request.
func TestUnmeteredAttempts(t *testing.T) {
	f := newFixture(t, nil)
	gr, phantom := f.grant(spec(Anthropic))
	resp := send(f, "POST", "/v1/messages/count_tokens?beta=true", `{"model":"`+gr.Model+`"}`, map[string]string{"X-Api-Key": phantom})
	readAll(t, resp)
	as := settledAttempts(t, f, gr.ID, 1)
	g := f.settled(gr.ID)
	if len(as) != 1 || as[0].Route != "POST /v1/messages/count_tokens" || as[0].State != AttemptCompleted ||
		!strings.HasPrefix(as[0].Decision, "ed1:") || as[0].Reserved != (Amount{}) || as[0].Charged != (Amount{}) {
		t.Fatalf("attempts %+v, want one completed count_tokens attempt charging nothing", as)
	}
	if g.Used != (Counters{}) {
		t.Errorf("count_tokens consumed %+v", g.Used)
	}
}

// TestAttemptSentWhileStreaming: an attempt whose request was written is
// recorded sent (within the watch interval) while its stream runs, and
// completed once settled.
func TestAttemptSentWhileStreaming(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 20, ChunkDelay: 50 * time.Millisecond, Text: strings.Repeat("s", 40)})
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	br := firstEvent(t, resp)
	var mid Attempt
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if as := attempts(t, f, gr.ID); len(as) == 1 && as[0].State == AttemptSent {
			mid = as[0]
			break
		}
	}
	io.Copy(io.Discard, br)
	resp.Body.Close()
	f.settled(gr.ID)
	if mid.State != AttemptSent || mid.Sent.IsZero() {
		t.Errorf("while streaming: %+v, want sent with its time", mid)
	}
	if as := attempts(t, f, gr.ID); as[0].State != AttemptCompleted || !as[0].Sent.Equal(mid.Sent) {
		t.Errorf("after the stream: %+v, want completed, sent at %v", as[0], mid.Sent)
	}
}

// TestOrphanedAttemptsCharged: an attempt a dead gate left open is,
// once its grant is long expired, settled uncertain at its full
// reservation — never zero, never left holding the budget.
func TestOrphanedAttemptsCharged(t *testing.T) {
	f := newFixture(t, nil)
	s := spec(Anthropic)
	s.TTL = time.Minute
	gr, _ := f.grant(s)
	amt := Amount{Tokens: 3000, Spend: 5000}
	var rid int64
	if err := f.gate.ledger.w.write(context.Background(), func(tx store.Tx) error {
		var reason string
		var err error
		rid, reason, err = f.gate.ledger.reserveTx(context.Background(), tx, gr.ID, amt, time.Now(), attemptTag{route: "POST /v1/messages"})
		if reason != "" {
			t.Errorf("reserve refused: %s", reason)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	later, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress,
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { later.Close() })
	if n, err := f.gate.ReconcileOrphans(context.Background()); err != nil || n != 0 {
		t.Fatalf("reconciled %d (%v) while the grant is live, want 0", n, err)
	}
	if n, err := later.ReconcileOrphans(context.Background()); err != nil || n != 1 {
		t.Fatalf("reconciled %d (%v), want 1", n, err)
	}
	as := attempts(t, f, gr.ID)
	if len(as) != 1 || as[0].ID != rid || as[0].State != AttemptUncertain || as[0].Charged != amt {
		t.Errorf("attempts %+v, want the orphan uncertain and charged %+v", as, amt)
	}
	g, _ := f.gate.Inspect(context.Background(), gr.ID)
	if g.Reserved != (Counters{}) || g.Used.Tokens != amt.Tokens || g.Used.Spend != amt.Spend {
		t.Errorf("grant counters %+v used %+v, want the reservation moved to used", g.Reserved, g.Used)
	}
}

// settledAttempts waits until grant id has n attempts, all settled (an
// unmetered attempt reserves nothing, so the grant's counters cannot tell).
func settledAttempts(t *testing.T, f *fixture, id string, n int) []Attempt {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		as := attempts(t, f, id)
		done := len(as) == n
		for _, a := range as {
			done = done && !a.Settled.IsZero()
		}
		if done || time.Now().After(deadline) {
			return as
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAttemptJSON: gate inspect prints an attempt's amounts in the
// grant counters' snake_case with the unit in the name (they printed as
// {"Tokens":…,"Spend":…}, newcomer report).
func TestAttemptJSON(t *testing.T) {
	b, err := json.Marshal(Attempt{Reserved: Amount{Tokens: 300, Spend: 4500}, Charged: Amount{Tokens: 100, Spend: 1500}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"reserved":{"tokens":300,"spend_nano_usd":4500}`, `"charged":{"tokens":100,"spend_nano_usd":1500}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("attempt JSON %s lacks %s", b, want)
		}
	}
}
