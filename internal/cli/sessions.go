package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/mcpserver"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/turn"
)

// sessionBusy is how long a session write waits for another process's
// write lock before the turn runs unarchived (with a warning).
const sessionBusy = 2 * time.Second

// sessionStore prepares the durable session archive in the state
// database. A file that is not an SQLite database stops the server at once
// with its path; the database itself (integrity check, migrations, crash
// recovery) opens on first use, so an idle server does not carry the
// database engine (issue 2: idle RSS). A database that then fails to open
// is reported with its path on every call; it is never deleted or
// recreated (issue 6, bad input).
func (a *app) sessionStore(log *slog.Logger) (*lazySessions, func(), error) {
	path := filepath.Join(a.env.StateDir(), "state.db")
	if err := store.CheckFile(path); err != nil {
		return nil, nil, a.startError(path, err)
	}
	l := &lazySessions{a: a, log: log, path: path}
	return l, l.close, nil
}

// startError is shown to the person who started coagent8 (terminal or the
// host's server log), so it names the file and the cause, redacted.
func (a *app) startError(path string, err error) error {
	msg := fmt.Sprintf("coagent8 cannot start: state database %s: %v", path, err)
	return fault.Wrap(fault.ProcessError, "state.open", redact.NewDiagnostic(a.env.Home()).String(msg), err)
}

// lazySessions opens the session store on first use.
type lazySessions struct {
	a    *app
	log  *slog.Logger
	path string

	once sync.Once
	st   *session.Store
	db   *store.DB
	err  error
}

var (
	_ turn.Sessions          = (*lazySessions)(nil)
	_ mcpserver.SessionStore = (*lazySessions)(nil)
)

func (l *lazySessions) get(ctx context.Context) (*session.Store, error) {
	l.once.Do(func() {
		// The first caller's context must not cancel the shared open.
		ctx := context.WithoutCancel(ctx)
		db, err := store.Open(ctx, l.path, sessionBusy)
		if err != nil {
			l.err = l.a.startError(l.path, err)
			return
		}
		st, err := session.Open(ctx, session.Options{DB: db, LockDir: filepath.Join(filepath.Dir(l.path), "sessions"), Logger: l.log})
		if err != nil {
			db.Close()
			l.err = l.a.startError(l.path, err)
			return
		}
		l.st, l.db = st, db
	})
	return l.st, l.err
}

func (l *lazySessions) close() {
	l.once.Do(func() {}) // no open after close
	if l.st != nil {
		l.st.Close()
		l.db.Close()
	}
}

// Begin implements turn.Sessions.
func (l *lazySessions) Begin(ctx context.Context, b turn.Begin) (turn.Lease, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Begin(ctx, b)
}

// List implements mcpserver.SessionStore.
func (l *lazySessions) List(ctx context.Context, ws string) ([]session.Info, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.List(ctx, ws)
}

// Status implements mcpserver.SessionStore.
func (l *lazySessions) Status(ctx context.Context, ws, h string) (session.Info, error) {
	s, err := l.get(ctx)
	if err != nil {
		return session.Info{}, err
	}
	return s.Status(ctx, ws, h)
}

// Result implements mcpserver.SessionStore.
func (l *lazySessions) Result(ctx context.Context, ws, h string, n int) (session.Result, error) {
	s, err := l.get(ctx)
	if err != nil {
		return session.Result{}, err
	}
	return s.Result(ctx, ws, h, n)
}

// History implements mcpserver.SessionStore.
func (l *lazySessions) History(ctx context.Context, ws, h, cur string, limit int) (session.Page, error) {
	s, err := l.get(ctx)
	if err != nil {
		return session.Page{}, err
	}
	return s.History(ctx, ws, h, cur, limit)
}

// CloseSession implements mcpserver.SessionStore.
func (l *lazySessions) CloseSession(ctx context.Context, ws, h string, del bool) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	if err := s.CloseSession(ctx, ws, h, del); err != nil {
		return err
	}
	// A closed session never continues: the CLI state a kernel session
	// kept for --resume goes with it.
	if err := delegation.RemoveSessionState(l.a.env.StateDir(), h); err != nil {
		l.log.Warn("kept session state not removed", "error", err.Error())
	}
	return nil
}

// Cancel implements mcpserver.SessionStore.
func (l *lazySessions) Cancel(ctx context.Context, ws, h string) (session.Cancelled, error) {
	s, err := l.get(ctx)
	if err != nil {
		return session.Cancelled{}, err
	}
	return s.Cancel(ctx, ws, h)
}
