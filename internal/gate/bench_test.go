package gate

import (
	"context"
	"io"
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
		if err := f.gate.ledger.settle(ctx, a.rid, gr.ID, a.reserved, Amount{Tokens: 100, Spend: 100}, OutcomeUsage, 0, time.Now(), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSequentialRequests sends streamed requests one after another
// through the gate to the local double (as bench/gate's latency phase)
// and reports the process CPU time per request, which other processes on
// a shared machine do not inflate: the double's and the client's share is
// the same for every gate version, so differences are the gate's.
//
//	go test ./internal/gate -run '^$' -bench SequentialRequests -benchtime 2000x
func BenchmarkSequentialRequests(b *testing.B) {
	f := newFixture(b, nil)
	s := spec(Anthropic)
	s.MaxRequests = 1 << 40
	gr, phantom := f.grant(s)
	readAll(&testing.T{}, f.call(Anthropic, phantom, gr.Model, true)) // warm the connections
	cpu0 := cpuTime()
	for b.Loop() {
		resp := f.call(Anthropic, phantom, gr.Model, true)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
}
