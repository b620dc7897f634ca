package gate

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/event"
)

// TestContainmentRefusalRecordedAfterPolicyCategoryFlood: the egress
// decider treats every egress.category refusal as one that can raise a
// containment signal and records a job's first in full, the rest within
// an allowance of their own; the gate contains only those carrying a
// credential. A delegated agent that first posts content of a label the
// user made non-declassifiable (policy, not compromise: no containment)
// spends that first and that allowance; its credential post, the one
// that contains it, was then only counted, and the gate, leaving the
// record to the decider, wrote no refusal of its own: the compromise
// event stood alone, without the record of the request that raised it.
// (A body with 1E1000 next to a \u escape was the second way in; it is
// no longer refused at all: TestHasCredentialLargeNumbers.)
func TestContainmentRefusalRecordedAfterPolicyCategoryFlood(t *testing.T) {
	for _, flood := range []string{"notes on " + privateMarker} {
		t.Run(strings.Fields(flood)[0], func(t *testing.T) {
			now := time.Now()
			f := newFixture(t, func(o *Options) {
				o.Now = func() time.Time { return now }
				categoryDecider(t, o)
			})
			gr, phantom := f.grant(spec(Anthropic))
			hdr := map[string]string{"X-Api-Key": phantom, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"}
			post := func(content string) string {
				resp := send(f, "POST", "/v1/messages", `{"model":"`+gr.Model+`","max_tokens":100,"messages":[{"role":"user","content":"`+content+`"}]}`, hdr)
				readAll(t, resp)
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("status %d, want 403", resp.StatusCode)
				}
				return resp.Header.Get(ReasonHeader)
			}
			for range 120 {
				if got := post(flood); got != egress.ReasonCategory {
					t.Fatalf("flood post refused %q, want %s", got, egress.ReasonCategory)
				}
			}
			if n := compromises(f); n != 0 {
				t.Fatalf("%d compromise events from policy refusals, want 0", n)
			}
			before := categoryRefusals(f)
			if got := post("use sk-ant-api03-" + strings.Repeat("A", 93) + "AA"); got != egress.ReasonCategory {
				t.Fatalf("credential post refused %q, want %s", got, egress.ReasonCategory)
			}
			if n := compromises(f); n != 1 {
				t.Fatalf("%d compromise events, want 1", n)
			}
			if got := categoryRefusals(f) - before; got != 1 {
				t.Errorf("the refusal that raised the containment: %d refusal events recorded, want 1", got)
			}
		})
	}
}

// categoryDecider is forbiddenDecider with the label's category made
// non-declassifiable: its content is refused egress.category.
func categoryDecider(t *testing.T, o *Options) {
	t.Helper()
	policyDecider(t, o, egress.Config{NonDeclassifiable: []egress.Category{egress.Credentials, egress.Confidential},
		Labels: []egress.LabelConfig{{Name: "deal", Patterns: []string{privateMarker}, Classification: 0.5, Category: egress.Confidential}}})
}

func compromises(f *fixture) (n int) {
	for _, e := range f.events.Events() {
		if e.Type == TypeCompromise {
			n++
		}
	}
	return n
}

func categoryRefusals(f *fixture) (n int) {
	for _, e := range f.events.Events() {
		if e.Type == event.TypeRefusal && e.Reason == egress.ReasonCategory {
			n++
		}
	}
	return n
}
