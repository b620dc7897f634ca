package gate

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/egress"
	egressledger "github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/redact"
)

// sealOnly hides the decider's joint methods: the gate then makes the
// egress claim and the budget reservation in two transactions.
type sealOnly struct{ d *egress.Decider }

func (s sealOnly) Seal(ctx context.Context, t egress.Transmission) ([]byte, error) {
	return s.d.Seal(ctx, t)
}

// TestConcurrentBudgetNeverOverspent: 200 parallel streamed requests
// against a spend budget that admits about 50; settled spend stays within
// the budget and every denial is a clean 429 with its reason. With the
// production decider the egress claim shares the reservation's
// transaction, so a budget refusal consumes no disclosure capacity
// (issue 9); a decider without that still never overspends.
func TestConcurrentBudgetNeverOverspent(t *testing.T) {
	for _, joint := range []bool{true, false} {
		t.Run(map[bool]string{true: "joint", false: "seal-only decider"}[joint], func(t *testing.T) {
			f := newFixture(t, func(o *Options) {
				if !joint {
					o.Egress = sealOnly{o.Egress.(*egress.Decider)}
				}
			})
			if (f.gate.joint != nil) != joint {
				t.Fatalf("gate joint path %v, want %v", f.gate.joint != nil, joint)
			}
			admitted := concurrentBudget(t, f)
			if used := disclosureUses(t, f); joint && used != int64(admitted) {
				t.Errorf("egress uses consumed %d, want one per admitted request (%d)", used, admitted)
			}
		})
	}
}

// concurrentBudget runs the 200-vs-about-50 scenario and returns how many
// requests were admitted.
func concurrentBudget(t *testing.T, f *fixture) int {
	s := spec(Anthropic)
	bodyLen := len(`{"model":"`+s.Model+`","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"`) + 2000 + len(`"}]}`)
	one := reservation(bodyLen, 1000, *s.Price)
	s.MaxSpend, s.OutputCeiling = one.Spend*50+one.Spend/2, 1000
	// Usage close to the worst case, so the budget really runs out.
	f.anth.Script(providertest.Reply{Chunks: 4, ChunkDelay: 2 * time.Millisecond, InputTokens: int64(bodyLen), OutputTokens: 1000})
	gr, phantom := f.grant(s)

	var mu sync.Mutex
	statuses := map[int]int{}
	badDenials := 0
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := f.call(Anthropic, phantom, s.Model, true)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			statuses[resp.StatusCode]++
			// Refused while others are in flight: 429, retry later; once
			// settled spend leaves no room: 402, final.
			reason := resp.Header.Get("X-Coagent8-Gate-Reason")
			if resp.StatusCode != 200 && !(resp.StatusCode == 429 && reason == ReasonBudgetReserved) &&
				!(resp.StatusCode == 402 && reason == ReasonBudgetSpend) {
				badDenials++
			}
		}()
	}
	wg.Wait()
	got := f.settled(gr.ID)
	t.Logf("statuses %v; used %+v; limit %d", statuses, got.Used, s.MaxSpend)
	if got.Used.Spend > s.MaxSpend {
		t.Errorf("settled spend %d exceeds budget %d", got.Used.Spend, s.MaxSpend)
	}
	if statuses[200] < 50 || statuses[200] > 60 || badDenials != 0 {
		t.Errorf("admitted %d (want about 50), unclean denials %d", statuses[200], badDenials)
	}
	if got.Used.Requests != int64(statuses[200]) || len(f.anth.Requests()) != statuses[200] {
		t.Errorf("requests counted %d, forwarded %d, admitted %d", got.Used.Requests, len(f.anth.Requests()), statuses[200])
	}
	return statuses[200]
}

// disclosureUses returns the egress uses consumed in f's database.
func disclosureUses(t *testing.T, f *fixture) int64 {
	t.Helper()
	led, err := egressledger.Open(context.Background(), f.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, left, _, err := led.Remaining(context.Background(), string(egress.ProviderRequest))
	if err != nil {
		t.Fatal(err)
	}
	return c.Uses - left.Uses
}

// firstEvent reads until the first SSE event has arrived.
func firstEvent(t *testing.T, resp *http.Response) *bufio.Reader {
	t.Helper()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatalf("no first event: %v", err)
	}
	return br
}

func TestClientDisconnectStillCharged(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 20, ChunkDelay: 20 * time.Millisecond, Text: strings.Repeat("a", 40),
		InputTokens: 300, OutputTokens: 200})
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	firstEvent(t, resp)
	resp.Body.Close() // the client goes away mid-stream
	got := f.settled(gr.ID)
	if got.Used.Tokens != 500 {
		t.Errorf("charged %d tokens, want the provider's 500 (drained to the usage event)", got.Used.Tokens)
	}
	if reqs := f.anth.Requests(); !reqs[0].Completed {
		t.Errorf("gate stopped reading upstream after the disconnect")
	}
}

func TestDisconnectWithoutDrainChargesReservation(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.DrainTimeout = 50 * time.Millisecond })
	f.anth.Script(providertest.Reply{Chunks: 50, ChunkDelay: 20 * time.Millisecond, Text: strings.Repeat("a", 50)})
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	firstEvent(t, resp)
	resp.Body.Close()
	got := f.settled(gr.ID)
	if got.Used.Tokens < 3000 {
		t.Errorf("charged %d tokens, want the full reservation", got.Used.Tokens)
	}
}

// cutWithin streams a long answer, calls act after the first event and
// reports how long the stream survived act.
func cutWithin(t *testing.T, f *fixture, phantom, model string, act func()) time.Duration {
	t.Helper()
	resp := f.call(Anthropic, phantom, model, true)
	br := firstEvent(t, resp)
	start := time.Now()
	act()
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	if strings.Contains(string(rest), "message_stop") {
		t.Errorf("stream ran to completion after the grant ended")
	}
	return time.Since(start)
}

func TestRevokeCutsStream(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 100, ChunkDelay: 50 * time.Millisecond, Text: strings.Repeat("b", 100)})
	gr, phantom := f.grant(spec(Anthropic))
	d := cutWithin(t, f, phantom, gr.Model, func() {
		if err := f.gate.Revoke(context.Background(), gr.ID); err != nil {
			t.Fatal(err)
		}
	})
	if d > time.Second {
		t.Errorf("stream survived revocation for %v", d)
	}
	resp := f.call(Anthropic, phantom, gr.Model, true)
	readAll(t, resp)
	if resp.Header.Get("X-Coagent8-Gate-Reason") != ReasonRevoked {
		t.Errorf("next request: %d %q", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"))
	}
	if got := f.settled(gr.ID); got.Used.Tokens < 3000 {
		t.Errorf("cut stream charged %d tokens, want its reservation", got.Used.Tokens)
	}
}

// TestRevokeFromOtherProcessCutsStream revokes through a second gate on the
// same database, as `coagent8 gate revoke` does.
func TestRevokeFromOtherProcessCutsStream(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 100, ChunkDelay: 50 * time.Millisecond, Text: strings.Repeat("b", 100)})
	gr, phantom := f.grant(spec(Anthropic))
	other, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	d := cutWithin(t, f, phantom, gr.Model, func() {
		if err := other.Revoke(context.Background(), gr.ID); err != nil {
			t.Fatal(err)
		}
	})
	if d > time.Second {
		t.Errorf("stream survived revocation for %v", d)
	}
}

func TestExpiryCutsStream(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 100, ChunkDelay: 50 * time.Millisecond, Text: strings.Repeat("b", 100)})
	s := spec(Anthropic)
	s.TTL = 400 * time.Millisecond
	gr, phantom := f.grant(s)
	d := cutWithin(t, f, phantom, gr.Model, func() {})
	if d > time.Second {
		t.Errorf("stream survived expiry for %v", d)
	}
}

// TestCanary: the real key never appears in a response, event or the
// event file, even when the upstream echoes it in an error body.
func TestCanary(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "events.jsonl")
	sink, err := event.OpenFile(logPath, redact.NewDiagnostic(""))
	if err != nil {
		t.Fatal(err)
	}
	var mem *event.Memory
	f := newFixture(t, func(o *Options) { mem = o.Events.(*event.Memory); o.Events = event.Multi{mem, sink} })
	f.anth.Script(providertest.Reply{Status: 401, EchoCredential: true,
		Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`})
	f.oai.Script(providertest.Reply{Status: 401, EchoCredential: true, Body: `{"error":{"message":"Incorrect API key provided"}}`})
	var seen []string
	for _, p := range []Provider{Anthropic, OpenAI} {
		gr, phantom := f.grant(spec(p))
		resp := f.call(p, phantom, gr.Model, true)
		body := readAll(t, resp)
		if resp.StatusCode != 401 || !strings.Contains(body, ReasonEcho) {
			t.Errorf("%s: got %d %q", p, resp.StatusCode, body)
		}
		hdr, _ := json.Marshal(resp.Header)
		seen = append(seen, body, string(hdr))
		f.settled(gr.ID)
	}
	evs, _ := json.Marshal(mem.Events())
	file, _ := os.ReadFile(logPath)
	seen = append(seen, string(evs), string(file))
	for _, s := range seen {
		for _, p := range []Provider{Anthropic, OpenAI} {
			if strings.Contains(s, realKey(p)) || strings.Contains(s, "canary") {
				t.Errorf("real key leaked into %q", s)
			}
		}
	}
	if !strings.Contains(string(evs), "REDACTED") {
		t.Errorf("upstream error detail not recorded redacted: %s", evs)
	}
}
