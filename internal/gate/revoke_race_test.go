package gate

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/secret"
)

// heldResolver holds the first resolution until release is closed: the
// admitted request then sits between its reservation and its flight,
// the window a revocation can land in.
type heldResolver struct {
	next    SecretResolver
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *heldResolver) Resolve(r secret.Ref) (secret.Value, error) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.entered)
		<-h.release
	}
	return h.next.Resolve(r)
}

// TestRevokeRacingAdmission: a request whose reservation committed just
// before RevokeJob, but whose flight was not yet registered (it was
// resolving the real credential), is refused grant.revoked and never
// reaches the provider. Before, cutGrant found no flight to cut, the
// request went upstream after RevokeJob had returned, and the watcher
// cut it only after its bytes had left (red team 3).
func TestRevokeRacingAdmission(t *testing.T) {
	held := &heldResolver{entered: make(chan struct{}), release: make(chan struct{})}
	f := newFixture(t, func(o *Options) { held.next = o.Secrets; o.Secrets = held })
	gr, phantom := f.grant(spec(Anthropic))
	type result struct {
		status int
		reason string
	}
	done := make(chan result, 1)
	go func() {
		resp := f.call(Anthropic, phantom, gr.Model, false)
		resp.Body.Close()
		done <- result{resp.StatusCode, resp.Header.Get("X-Coagent8-Gate-Reason")}
	}()
	select {
	case <-held.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached credential resolution")
	}
	if ids, err := f.gate.RevokeJob(context.Background(), "job-1"); err != nil || len(ids) != 1 {
		t.Fatalf("RevokeJob = %v, %v", ids, err)
	}
	close(held.release)
	res := <-done
	if res.status == 200 || res.reason != ReasonRevoked {
		t.Errorf("request admitted before a revocation it raced: status %d reason %q, want grant.revoked", res.status, res.reason)
	}
	if n := len(f.anth.Requests()); n != 0 {
		t.Errorf("the provider received %d request(s) after RevokeJob returned", n)
	}
	if got := f.settled(gr.ID).Used; got.Tokens != 0 || got.Spend != 0 {
		t.Errorf("a request never sent was charged %+v", got)
	}
}
