package gate

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/egress"
	egressledger "github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
)

// forbiddenDecider makes o's egress decider refuse any body naming the
// labelled project (classification 0.9 at forbidden_threshold 0.8), on
// o's clock.
func forbiddenDecider(t *testing.T, o *Options) {
	t.Helper()
	policyDecider(t, o, egress.Config{
		Labels: []egress.LabelConfig{{Name: "deal", Patterns: []string{privateMarker}, Classification: 0.9, Category: egress.Confidential}}})
}

// policyDecider installs in o a real egress decider with c's labels and
// categories (portal 0.3, forbidden 0.8, provider requests within a
// generous disclosure account) on o's database, events and clock.
func policyDecider(t *testing.T, o *Options, c egress.Config) {
	t.Helper()
	portal, forbidden := 0.3, 0.8
	c.PortalThreshold, c.ForbiddenThreshold = &portal, &forbidden
	c.Purposes = map[egress.Purpose]egress.PurposeConfig{egress.ProviderRequest: {MaxUses: 1000, MaxBytes: 1 << 30}}
	pol, err := egress.NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	installDecider(t, o, pol)
}

// installDecider sets o.Egress to the production decider under pol, on
// o's database, events and clock, with its own evidence key.
func installDecider(t *testing.T, o *Options, pol *egress.Policy) {
	t.Helper()
	led, err := egressledger.Open(context.Background(), o.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := evidence.LoadKey(filepath.Join(t.TempDir(), "evidence.key"))
	if err != nil {
		t.Fatal(err)
	}
	o.Egress, err = egress.New(egress.Options{Policy: pol, Ledger: led, Key: key, Events: o.Events, Now: o.Now, Principal: "test"})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEgressRefusalFloodBounded (known gap: refusals the egress decider
// made were not limited; a delegated agent looping on a post carrying
// labelled content wrote one event and one egress_record row per
// request, 300 posts → 300 of each): every post is still answered 403
// with its reason, but the log and the ledger hold the decider's burst,
// and the refusals left out are accounted for when the job's grant ends.
// Frozen clock: no allowance refills during the flood.
func TestEgressRefusalFloodBounded(t *testing.T) {
	now := time.Now()
	f := newFixture(t, func(o *Options) {
		o.Now = func() time.Time { return now }
		forbiddenDecider(t, o)
	})
	gr, phantom := f.grant(spec(Anthropic))
	body := `{"model":"` + gr.Model + `","max_tokens":100,"messages":[{"role":"user","content":"notes on ` + privateMarker + `"}]}`
	const posts, burst = 300, 100 // burst: the decider's (internal/egress, refusallimit.go)
	for i := range posts {
		resp := send(f, "POST", "/v1/messages", body, map[string]string{"X-Api-Key": phantom, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"})
		readAll(t, resp)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(ReasonHeader) != egress.ReasonForbidden {
			t.Fatalf("post %d: %d %q, want 403 %s", i, resp.StatusCode, resp.Header.Get(ReasonHeader), egress.ReasonForbidden)
		}
	}
	if n := len(f.anth.Requests()); n != 0 {
		t.Errorf("provider double received %d requests", n)
	}
	if got := f.gate.Refusals()[egress.ReasonForbidden]; got != posts {
		t.Errorf("refusal counter %d, want %d", got, posts)
	}
	if ev, rows := egressTally(t, f, egress.ReasonForbidden); ev != burst || rows != burst {
		t.Errorf("%d refused posts: %d events and %d egress_record rows, want %d each", posts, ev, rows, burst)
	}
	if err := f.gate.Revoke(context.Background(), gr.ID); err != nil {
		t.Fatal(err)
	}
	var summaries []map[string]string
	for _, e := range f.events.Events() {
		if e.Reason == egress.ReasonRefusalsSuppressed {
			summaries = append(summaries, e.IDs)
		}
	}
	if len(summaries) != 1 || summaries[0]["job"] != gr.Job || summaries[0]["suppressed"] != strconv.Itoa(posts-burst) {
		t.Errorf("summaries after the revocation %v, want one of job %s with suppressed %d", summaries, gr.Job, posts-burst)
	}
	var rowSuppressed int
	if err := f.db.SQL().QueryRow(`SELECT COALESCE(SUM(suppressed), 0) FROM egress_record WHERE reason = ?`, egress.ReasonRefusalsSuppressed).Scan(&rowSuppressed); err != nil {
		t.Fatal(err)
	}
	if rowSuppressed != posts-burst {
		t.Errorf("ledger summary counts %d, want %d", rowSuppressed, posts-burst)
	}
}

// egressTally counts the refusal events and egress_record rows of reason.
func egressTally(t *testing.T, f *fixture, reason string) (events, rows int) {
	t.Helper()
	for _, e := range f.events.Events() {
		if e.Type == event.TypeRefusal && e.Reason == reason {
			events++
		}
	}
	if err := f.db.SQL().QueryRow(`SELECT COUNT(*) FROM egress_record WHERE reason = ?`, reason).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	return events, rows
}

// TestEgressContainmentRefusalRecordedAfterFlood: a job that spent the
// decider's allowance on refused posts, then sends a credential, has
// that refusal — the one that raises its containment — recorded, with
// the compromise event, and the refusals left out are accounted for when
// the containment revokes its grant.
func TestEgressContainmentRefusalRecordedAfterFlood(t *testing.T) {
	now := time.Now()
	f := newFixture(t, func(o *Options) {
		o.Now = func() time.Time { return now }
		forbiddenDecider(t, o)
	})
	gr, phantom := f.grant(spec(Anthropic))
	hdr := map[string]string{"X-Api-Key": phantom, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"}
	post := func(content string) string {
		resp := send(f, "POST", "/v1/messages", `{"model":"`+gr.Model+`","max_tokens":100,"messages":[{"role":"user","content":"`+content+`"}]}`, hdr)
		readAll(t, resp)
		return resp.Header.Get(ReasonHeader)
	}
	for range 120 {
		post("notes on " + privateMarker)
	}
	if got := post("use sk-ant-api03-" + strings.Repeat("A", 93) + "AA"); got != egress.ReasonCategory {
		t.Fatalf("credential post refused %q, want %s", got, egress.ReasonCategory)
	}
	got := map[string]int{}
	suppressed := 0
	for _, e := range f.events.Events() {
		got[e.Reason]++
		if e.Reason == egress.ReasonRefusalsSuppressed && e.IDs["job"] == gr.Job {
			suppressed, _ = strconv.Atoi(e.IDs["suppressed"])
		}
	}
	if got[egress.ReasonCategory] != 1 || got[SignalCredential] != 1 {
		t.Errorf("after the flood: %d credential refusals and %d compromise events recorded, want 1 each", got[egress.ReasonCategory], got[SignalCredential])
	}
	if suppressed != 20 {
		t.Errorf("summary at the containment: suppressed %d, want 20", suppressed)
	}
}
