package operator

import (
	"context"
	"strconv"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/doctor"
	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
)

// seedDemo fills the state with a small, plausible installation: two
// workspaces' sessions, gate grants of three jobs, sandbox runs, egress
// decisions with a few refusals (screenshots and the browser test).
func seedDemo(t testingT, o *owners) {
	o.grant("job-7f3a", "claude-sonnet-5")
	o.use("job-7f3a", 2, 18000, 120000000)
	o.grant("job-2c91", "claude-sonnet-5")
	o.use("job-2c91", 9, 86000, 1700000000)
	o.grant("job-0b44", "claude-haiku-5")
	for i, exit := range []string{"exited", "exited", "resource_limit"} {
		id := "sb-" + strconv.Itoa(41+i)
		o.event(event.Event{Type: event.TypeDecision, Reason: "sandbox.admitted", Rule: "sandbox", IDs: map[string]string{"job_id": id}})
		o.event(event.Event{Type: event.TypeExecution, Reason: "sandbox.run." + exit, Rule: "sandbox",
			IDs:    map[string]string{"job_id": id, "exit_code": map[bool]string{true: "137", false: "0"}[exit != "exited"]},
			Detail: "tree_empty=true run_ms=" + strconv.Itoa(180+40*i) + ".0 memory_peak_bytes=" + strconv.Itoa(41<<20)})
	}
	o.event(event.Event{Type: event.TypeDecision, Reason: "sandbox.admitted", Rule: "sandbox", IDs: map[string]string{"job_id": "sb-44"}})
	for i := range 24 {
		o.claim(int64(2000 + 300*i))
	}
	o.decision("deny", "egress.credential")
	o.decision("deny", "egress.category")
	o.decision("deny", "egress.credential")
	o.session("~/src/billing-api")
	o.session("~/src/billing-api")
	o.session("~/src/web-frontend")
	o.event(event.Event{Type: event.TypeRefusal, Code: "POLICY_DENIED", Reason: "governance.deny", Rule: "governance",
		Backend: "claude", Model: "claude-opus-4.7"})
	o.event(event.Event{Type: event.TypeVerification, Reason: "claude.startup_report", Backend: "claude", Model: "claude-sonnet-5"})
}

type testingT interface {
	Helper()
	Fatal(...any)
}

// use charges a job's grants as the gate's settlement would (the test
// cannot send provider traffic): counters only grow.
func (o *owners) use(job string, requests, tokens, nanoUSD int64) {
	o.t.Helper()
	_, err := o.db.SQL().Exec(`UPDATE gate_grants SET requests = requests + ?, tokens = tokens + ?, spend = spend + ? WHERE job = ?`,
		requests, tokens, nanoUSD, job)
	if err != nil {
		o.t.Fatal(err)
	}
}

// claim records an allowed provider request of n bytes, consuming the
// default disclosure account.
func (o *owners) claim(n int64) {
	o.t.Helper()
	err := o.ledger.Claim(context.Background(), "provider-request", ledger.Ceiling{Uses: 1000000, Bytes: 256 << 30}, n,
		ledger.Record{Purpose: "provider-request", Effect: "allow", Reason: "egress.allowed", Bytes: n, Evidence: "ed1:demo"})
	if err != nil {
		o.t.Fatal(err)
	}
}

// demoDoctor is the overview's report in the tests (no CLI is probed).
func demoDoctor(context.Context) doctor.Report {
	return doctor.Report{SchemaVersion: 1, Version: "0.1.0-dev", Platform: "linux/amd64", Status: "operational",
		ReadyBackends: []string{"claude", "codex"},
		Backends: []doctor.Backend{
			{Probe: adapter.Probe{Backend: "claude", Installed: true, Version: "2.1.328", Supported: true, AuthStatus: "authenticated", DefaultModel: "claude-sonnet-5"},
				ReadOnlyVerified: true, ResolvedModel: "claude-sonnet-5"},
			{Probe: adapter.Probe{Backend: "codex", Installed: true, Version: "0.169.0", Supported: true, AuthStatus: "authenticated"},
				ReadOnlyVerified: true, ResolvedModel: "gpt-5.5"},
		},
		Sections: map[string]any{
			"sandbox":    map[string]any{"available": true, "qualified": true, "qualifiedAt": time.Date(2026, 12, 1, 9, 12, 0, 0, time.UTC)},
			"governance": map[string]any{"askAbovePrice": "20.00", "priceMultiplier": "2.00", "models": map[string][]string{"allow": {"claude-sonnet-5"}, "ask": {}, "deny": {"claude-opus-4.7"}}},
		}}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
