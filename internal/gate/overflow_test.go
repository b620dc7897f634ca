package gate

import (
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
