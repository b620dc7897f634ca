package session

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/turn"
)

// Limits of the archive (contract.md §6).
const (
	DefaultSessionBytes = 10 << 20  // per session
	DefaultTotalBytes   = 100 << 20 // all sessions
	DefaultIdleTTL      = 2 * time.Hour
	DefaultAutoReuse    = 15 * time.Minute
	DefaultRetention    = 7 * 24 * time.Hour
)

// Options configure a [Store]. Zero limits take the defaults above.
type Options struct {
	// DB is the open state database; the Store migrates its component
	// "sessions" and does not close DB.
	DB *store.DB
	// LockDir holds the per-instance lock files (created 0700). Required.
	LockDir string
	// SessionBytes and TotalBytes bound the archive; oldest messages are
	// evicted first when a write would exceed them.
	SessionBytes, TotalBytes int64
	// IdleTTL expires sessions idle this long (SESSION_INVALID).
	IdleTTL time.Duration
	// FlushEvery is how often streamed deltas are written (0 = 1 s); a
	// chunk of 64 KiB is written at once.
	FlushEvery time.Duration
	Logger     *slog.Logger
}

// Store is the durable session table. It is safe for concurrent use by
// every MCP connection of the process; Close releases the instance lock.
type Store struct {
	db       *sql.DB
	path     string
	opts     Options
	instance string
	lock     *lockFile
	answer   *redact.Redactor
	log      *slog.Logger
	now      func() time.Time

	mu      sync.Mutex
	running map[string]*lease // handle → this process's running turn
}

var _ turn.Sessions = (*Store)(nil)

// Open migrates the sessions schema, takes this instance's lock and
// recovers leases of dead instances (their turns become failed with
// reason server_exit). Errors carry the database path; nothing is ever
// deleted to "repair" a database.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.DB == nil || o.LockDir == "" {
		return nil, fmt.Errorf("session: DB and LockDir are required")
	}
	o = withDefaults(o)
	if err := o.DB.Migrate(ctx, "sessions", migrations); err != nil {
		return nil, fmt.Errorf("session archive %s: %w", o.DB.Path(), err)
	}
	s := &Store{db: o.DB.SQL(), path: o.DB.Path(), opts: o, answer: redact.NewAnswer(), log: o.Logger,
		now: time.Now, running: map[string]*lease{}}
	if err := s.register(); err != nil {
		return nil, err
	}
	if err := s.recoverDead(ctx); err != nil {
		// A locked database must not stop the server: recovery runs again
		// lazily when a dead lease is met.
		s.log.Warn("session recovery postponed", "path", s.path, "error", err.Error())
	}
	s.prune(ctx)
	return s, nil
}

func withDefaults(o Options) Options {
	if o.SessionBytes <= 0 {
		o.SessionBytes = DefaultSessionBytes
	}
	if o.TotalBytes <= 0 {
		o.TotalBytes = DefaultTotalBytes
	}
	if o.IdleTTL <= 0 {
		o.IdleTTL = DefaultIdleTTL
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// register creates this instance's id and holds its lock file.
func (s *Store) register() error {
	dir := filepath.Join(s.opts.LockDir, "instances")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session lock directory %s: %w", dir, err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	s.instance = hex.EncodeToString(b[:])
	l, ok, err := tryLock(s.lockPath(s.instance))
	if err != nil || !ok {
		return fmt.Errorf("session instance lock in %s: %v", dir, err)
	}
	s.lock = l
	return nil
}

func (s *Store) lockPath(instance string) string {
	return filepath.Join(s.opts.LockDir, "instances", instance+".lock")
}

// Instance returns this store's server instance id (lease owner).
func (s *Store) Instance() string { return s.instance }

// Close releases the instance lock. Running turns keep their rows; a
// later Open (of any process) recovers them as server_exit.
func (s *Store) Close() error {
	if s.lock == nil {
		return nil
	}
	path := s.lockPath(s.instance)
	err := s.lock.unlock()
	os.Remove(path)
	s.lock = nil
	return err
}

func (s *Store) ms() int64 { return s.now().UnixMilli() }
