//go:build linux && amd64

package delegation

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/secret"
)

// TestJobHandlerRefusesOtherJobsPhantom: the gate as a job's sandbox
// reaches it refuses a phantom of another job's grant (a phantom that
// leaked between sandboxes) with grant.job and revokes that job's grant;
// the job's own phantom is admitted. Before, Run served the shared gate,
// which admitted any live phantom on the other job's budget.
func TestJobHandlerRefusesOtherJobsPhantom(t *testing.T) {
	double := providertest.NewAnthropic(t, providertest.Options{})
	g := newGate(t, double.URL())
	const model = "claude-sonnet-4-5"
	leakedGrant, leaked := grant(t, g, model) // job-delegation
	ref, _ := secret.ParseRef("env:REAL_KEY")
	own, ownPhantom, err := g.Grant(context.Background(), gate.Spec{Provider: gate.Anthropic, Model: model, Job: "job-other",
		TTL: time.Hour, Secret: ref, MaxRequests: 20, MaxTokens: 10_000_000, MaxSpend: gate.USD(100),
		Price: &gate.Price{InputPerMTok: 3, OutputPerMTok: 15}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := jobHandler(context.Background(), Job{Gate: g, Grant: own.ID})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(phantom secret.Value) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(`{"model":"`+model+`","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("X-Api-Key", phantom.Reveal())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post(leaked); resp.Header.Get("X-Coagent8-Gate-Reason") != gate.ReasonJob {
		t.Errorf("another job's phantom: status %d reason %q, want %s", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"), gate.ReasonJob)
	}
	if gr, _ := g.Inspect(context.Background(), leakedGrant.ID); gr.State != gate.Revoked {
		t.Errorf("the leaked phantom's grant is %s, want revoked", gr.State)
	}
	if resp := post(ownPhantom); resp.StatusCode != http.StatusOK {
		t.Errorf("the job's own phantom: status %d reason %q", resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason"))
	}
}

// TestJobHandlerUnreadableGrant: a job whose grant the gate cannot read
// is refused as coagent8's own failure (PROCESS_ERROR delegation.grant):
// the governor made the grant, the caller gave no input that could be
// wrong.
func TestJobHandlerUnreadableGrant(t *testing.T) {
	g := newGate(t, providertest.NewAnthropic(t, providertest.Options{}).URL())
	_, err := jobHandler(context.Background(), Job{Gate: g, Grant: "grant-that-does-not-exist"})
	var f *fault.Error
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a *fault.Error", err)
	}
	if got, want := string(f.Code)+" "+f.Reason, string(fault.ProcessError)+" delegation.grant"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
