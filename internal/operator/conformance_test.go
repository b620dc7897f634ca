package operator

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/turn"
)

// owners writes state through the packages that own it, as the MCP
// server and the gate would in other processes: the dashboard's queries
// must read what they write (a schema change there fails here).
type owners struct {
	t      testing.TB
	dir    string
	db     *store.DB
	events *event.FileSink
	gate   *gate.Gate
	ledger *ledger.Ledger
	sess   *session.Store
}

func newOwners(t testing.TB, dir string) *owners {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	o := &owners{t: t, dir: dir, db: db}
	if o.events, err = event.OpenFile(filepath.Join(dir, "events.jsonl"), redact.NewDiagnostic("")); err != nil {
		t.Fatal(err)
	}
	key, err := gate.LoadKey(filepath.Join(dir, "gate.key"))
	if err != nil {
		t.Fatal(err)
	}
	if o.gate, err = gate.New(ctx, gate.Options{DB: db, Key: key, Egress: sealNothing{}}); err != nil {
		t.Fatal(err)
	}
	if o.ledger, err = ledger.Open(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	if o.sess, err = session.Open(ctx, session.Options{DB: db, LockDir: filepath.Join(dir, "locks")}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.sess.Close(); o.gate.Close(); o.events.Close(); db.Close() })
	return o
}

// sealNothing is an egress decider the tests never reach (no request is
// forwarded); gate.New requires one.
type sealNothing struct{}

func (sealNothing) Seal(context.Context, egress.Transmission) ([]byte, error) {
	panic("no request is forwarded in these tests")
}

func (o *owners) event(e event.Event) {
	o.t.Helper()
	if err := o.events.Record(e); err != nil {
		o.t.Fatal(err)
	}
}

func (o *owners) grant(job, model string) gate.Grant {
	o.t.Helper()
	ref, err := secret.ParseRef("env:OPERATOR_TEST_KEY")
	if err != nil {
		o.t.Fatal(err)
	}
	g, _, err := o.gate.Grant(context.Background(), gate.Spec{Provider: gate.Anthropic, Model: model, Job: job, TTL: time.Hour,
		Secret: ref, MaxRequests: 10, MaxTokens: 100000, MaxSpend: gate.USD(2), Price: &gate.Price{InputPerMTok: 3, OutputPerMTok: 15},
		OutputCeiling: 4096})
	if err != nil {
		o.t.Fatal(err)
	}
	return g
}

func (o *owners) decision(effect, reason string) {
	o.t.Helper()
	if err := o.ledger.Append(context.Background(), ledger.Record{Purpose: "provider-request", Effect: effect, Reason: reason,
		Bytes: 1234, Evidence: "ed1:test"}); err != nil {
		o.t.Fatal(err)
	}
}

func (o *owners) session(workspace string) string {
	o.t.Helper()
	l, err := o.sess.Begin(context.Background(), turn.Begin{Workspace: workspace, Backend: "claude", Model: "claude-sonnet-5", Prompt: "hi"})
	if err != nil {
		o.t.Fatal(err)
	}
	l.End(context.Background(), turn.End{Status: turn.Completed, Model: "claude-sonnet-5", Output: "ok"})
	return l.Handle()
}
