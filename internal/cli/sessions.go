package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/store"
)

// sessionBusy is how long a session write waits for another process's
// write lock before the turn runs unarchived (with a warning).
const sessionBusy = 2 * time.Second

// sessionStore opens the durable session archive in the state database.
// A database that cannot be opened or is corrupted stops the server with
// its path; it is never deleted or recreated (issue 6, bad input).
func (a *app) sessionStore(ctx context.Context, log *slog.Logger) (*session.Store, func(), error) {
	dir := a.env.StateDir()
	path := filepath.Join(dir, "state.db")
	db, err := store.Open(ctx, path, sessionBusy)
	if err != nil {
		return nil, nil, a.startError(path, err)
	}
	s, err := session.Open(ctx, session.Options{DB: db, LockDir: filepath.Join(dir, "sessions"), Logger: log})
	if err != nil {
		db.Close()
		return nil, nil, a.startError(path, err)
	}
	return s, func() { s.Close(); db.Close() }, nil
}

// startError is shown to the person who started coagent8 (terminal or the
// host's server log), so it names the file and the cause, redacted.
func (a *app) startError(path string, err error) error {
	msg := fmt.Sprintf("coagent8 cannot start: state database %s: %v", path, err)
	return fault.Wrap(fault.ProcessError, "state.open", redact.NewDiagnostic(a.env.Home()).String(msg), err)
}
