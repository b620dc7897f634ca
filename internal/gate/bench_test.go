package gate

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkAdmissionTx is the gate's SQLite work for one request in
// isolation: the joint admission transaction (egress decision of a small
// body, disclosure claim, budget reservation) and the settlement
// transaction. The end-to-end numbers are in bench/gate.
//
//	go test ./internal/gate -run '^$' -bench AdmissionTx
func BenchmarkAdmissionTx(b *testing.B) {
	f := newFixture(b, nil)
	s := spec(Anthropic)
	s.MaxRequests = 1 << 40
	gr, _ := f.grant(s)
	body := []byte(`{"model":"` + gr.Model + `","max_tokens":256,"messages":[{"role":"user","content":"hi"}]}`)
	route := Route{Provider: Anthropic, Method: "POST", Path: "/v1/messages", Metered: true}
	ctx := context.Background()
	req := httptest.NewRequest("POST", "/v1/messages?beta=true", nil)
	b.ReportAllocs()
	for b.Loop() {
		a := &admission{grant: gr, route: route, body: body, reserved: Amount{Tokens: 300, Spend: 300}}
		if reason := f.gate.sealJoint(ctx, f.gate.transmission(req, a), a); reason != "" {
			b.Fatal(reason)
		}
		if err := f.gate.ledger.settle(ctx, a.rid, gr.ID, a.reserved, Amount{Tokens: 100, Spend: 100}, OutcomeUsage, 0, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
