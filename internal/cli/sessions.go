package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

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
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), sessionBusy)
	if err != nil {
		return nil, nil, fmt.Errorf("coagent8 cannot start: %w", err)
	}
	s, err := session.Open(ctx, session.Options{DB: db, LockDir: filepath.Join(dir, "sessions"), Logger: log})
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("coagent8 cannot start: %w", err)
	}
	return s, func() { s.Close(); db.Close() }, nil
}
