package gate

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestHugeOutputLimitIsRefused: a request naming an output limit near
// 2^63 (the sandboxed agent writes the body) reserves the most the budget
// can hold, never a wrapped negative amount that every budget admits.
func TestHugeOutputLimitIsRefused(t *testing.T) {
	for _, limit := range []int64{math.MaxInt64, 1 << 62, 1 << 50} {
		t.Run(strconv.FormatInt(limit, 10), func(t *testing.T) {
			f := newFixture(t, nil)
			gr, phantom := f.grant(spec(Anthropic))
			body := `{"model":"` + gr.Model + `","max_tokens":` + strconv.FormatInt(limit, 10) + `,"stream":true,"messages":[]}`
			req, _ := http.NewRequest("POST", f.srv.URL+"/v1/messages?beta=true", strings.NewReader(body))
			req.Header.Set("X-Api-Key", phantom)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			if resp.StatusCode != http.StatusPaymentRequired || len(f.anth.Requests()) != 0 {
				t.Errorf("status %d (reason %q), %d upstream requests; want 402 and none",
					resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), len(f.anth.Requests()))
			}
		})
	}
}

// TestHugeReportedUsageChargesNotCredits: a usage report near 2^63 tokens
// settles as at least the budget, never as a negative spend that would
// give the grant more room.
func TestHugeReportedUsageChargesNotCredits(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{InputTokens: 10, OutputTokens: math.MaxInt64})
	s := spec(Anthropic)
	gr, phantom := f.grant(s)
	readAll(t, f.call(Anthropic, phantom, gr.Model, true))
	if got := f.settled(gr.ID).Used; got.Tokens < s.MaxTokens || got.Spend < s.MaxSpend {
		t.Errorf("used %+v after a usage report of 2^63 tokens; want at least the limits", got)
	}
}

// TestNegativeUsageChargesReservation: a usage report with a negative
// count (input_tokens -1,000,000 from Anthropic; OpenAI cached_tokens
// below zero) is no usage report: the exchange is charged its full
// reservation, as when no usage arrived. Before, the negative field was
// clamped to zero and the rest charged, so a lying upstream (or an
// intermediary rewriting usage) settled a request for next to nothing.
func TestNegativeUsageChargesReservation(t *testing.T) {
	tests := []struct {
		name  string
		p     Provider
		reply providertest.Reply
	}{
		{"anthropic negative input", Anthropic, providertest.Reply{InputTokens: -1_000_000, OutputTokens: 5}},
		{"anthropic negative cache read", Anthropic, providertest.Reply{InputTokens: 10, CacheReadInputTokens: -1_000_000, OutputTokens: 5}},
		{"openai negative cached subset", OpenAI, providertest.Reply{InputTokens: 10, CacheReadInputTokens: -1_000_000, OutputTokens: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.anth.Script(tt.reply)
			f.oai.Script(tt.reply)
			gr, phantom := f.grant(spec(tt.p))
			readAll(t, f.call(tt.p, phantom, gr.Model, true))
			used := f.settled(gr.ID).Used
			as, err := f.gate.Attempts(context.Background(), gr.ID)
			if err != nil || len(as) != 1 {
				t.Fatalf("attempts %v, %v", as, err)
			}
			if a := as[0]; a.Charged != a.Reserved || used.Spend != a.Reserved.Spend || a.Outcome == OutcomeUsage {
				t.Errorf("charged %+v (outcome %s, used %+v) for a negative usage report; want the reservation %+v",
					a.Charged, a.Outcome, used, a.Reserved)
			}
		})
	}
}
