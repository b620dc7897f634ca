package cli

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/mcpserver"
	"github.com/coagent8/coagent8/internal/store"
)

// issueRecorder is closed-diagnostic-recording@1 for the issue tool: on
// first use it opens the state database, the egress policy in force (the
// configuration's "egress" section or the built-in one) and the evidence
// key, then admits each report's exact bytes against the purpose's own
// capacity and writes them to <state>/diagnostics (issue 10 §5). Nothing
// is sent anywhere.
type issueRecorder struct {
	a      *app
	events event.Sink

	once sync.Once
	db   *store.DB
	rec  *egress.DiagnosticRecorder
	err  error
}

var _ mcpserver.IssueRecorder = (*issueRecorder)(nil)

func (r *issueRecorder) open(ctx context.Context) (*egress.DiagnosticRecorder, error) {
	r.once.Do(func() {
		ctx := context.WithoutCancel(ctx)
		path := filepath.Join(r.a.env.StateDir(), "state.db")
		db, err := store.Open(ctx, path, sessionBusy)
		if err != nil {
			r.err = r.a.startError(path, err)
			return
		}
		d, _, err := r.a.egressDecider(ctx, db, r.events, "")
		if err == nil {
			r.rec, err = egress.NewDiagnosticRecorder(d, filepath.Join(r.a.env.StateDir(), "diagnostics"))
		}
		if err != nil {
			db.Close()
			r.err = err
			return
		}
		r.db = db
	})
	return r.rec, r.err
}

// Record implements mcpserver.IssueRecorder.
func (r *issueRecorder) Record(ctx context.Context, report []byte) (string, error) {
	rec, err := r.open(ctx)
	if err != nil {
		return "", err
	}
	act, err := rec.Claim(ctx, report)
	if err != nil {
		return "", err
	}
	return act.Record(report)
}

func (r *issueRecorder) close() {
	r.once.Do(func() {})
	if r.db != nil {
		r.db.Close()
	}
}
