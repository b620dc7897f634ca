package gate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/providertest"
)

func TestAnthropicStreamSettlesFromUsage(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Text: "hello there", Chunks: 3, InputTokens: 100, OutputTokens: 20,
		CacheCreationInputTokens: 50, CacheReadInputTokens: 1000})
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(body, "message_stop") {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	got := f.settled(gr.ID)
	// input = uncached + cache write + cache read (notes/gate.md §3)
	want := Counters{Requests: 1, Tokens: 100 + 50 + 1000 + 20,
		Spend: cost(100, 3) + cost(50, 3.75) + cost(1000, 0.3) + cost(20, 15)}
	if diff := cmp.Diff(want, got.Used); diff != "" {
		t.Errorf("used (-want +got):\n%s", diff)
	}
	reqs := f.anth.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests", len(reqs))
	}
	if c := reqs[0].Credential(); c != realKey(Anthropic) {
		t.Errorf("upstream credential is not the real key")
	}
	if reqs[0].RawQuery != "beta=true" || strings.Contains(string(reqs[0].Body), phantom) {
		t.Errorf("query %q or body carries the phantom", reqs[0].RawQuery)
	}
	for k, v := range reqs[0].Header {
		if strings.Contains(strings.Join(v, ","), phantom) || strings.HasPrefix(k, "X-Coagent8") {
			t.Errorf("upstream header %s carries the phantom or gate metadata", k)
		}
	}
	if n := f.secrets.calls.Load(); n != 1 {
		t.Errorf("secret resolved %d times, want 1", n)
	}
	if diff := cmp.Diff([]string{"grant.created", egress.ReasonRaw, ReasonAdmitted, "settled.usage"}, f.reasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestOpenAIStreamSettlesCachedSubset(t *testing.T) {
	f := newFixture(t, nil)
	f.oai.Script(providertest.Reply{InputTokens: 40, CacheReadInputTokens: 60, OutputTokens: 7})
	gr, phantom := f.grant(spec(OpenAI))
	resp := f.call(OpenAI, phantom, gr.Model, true)
	if body := readAll(t, resp); !strings.Contains(body, "response.completed") {
		t.Fatalf("body %q", body)
	}
	got := f.settled(gr.ID).Used
	want := Counters{Requests: 1, Tokens: 107, Spend: cost(40, 3) + cost(60, 0.3) + cost(7, 15)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("used (-want +got):\n%s", diff)
	}
	if c := f.oai.Requests()[0].Credential(); c != realKey(OpenAI) {
		t.Errorf("upstream credential is not the real key")
	}
}

func TestNonStreamingSettles(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{InputTokens: 11, OutputTokens: 4})
	gr, phantom := f.grant(spec(Anthropic))
	readAll(t, f.call(Anthropic, phantom, gr.Model, false))
	if got := f.settled(gr.ID).Used.Tokens; got != 15 {
		t.Errorf("tokens = %d, want 15", got)
	}
}

func TestNoUsageChargesReservation(t *testing.T) {
	for _, rep := range []providertest.Reply{{NoUsage: true}, {Truncate: true}} {
		f := newFixture(t, nil)
		f.anth.Script(rep)
		gr, phantom := f.grant(spec(Anthropic))
		readAll(t, f.call(Anthropic, phantom, gr.Model, true))
		got := f.settled(gr.ID)
		reserved := f.anth.Requests()[0].Body
		want := reservation(len(reserved), 1000, *spec(Anthropic).Price)
		if got.Used.Tokens != want.Tokens || got.Used.Spend != want.Spend {
			t.Errorf("%+v: used %+v, want full reservation %+v", rep, got.Used, want)
		}
		if r := f.reasons(); r[len(r)-1] != "settled.no_usage" {
			t.Errorf("%+v: last event %q", rep, r[len(r)-1])
		}
	}
}
