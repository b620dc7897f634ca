package operator

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/coagent8/coagent8/internal/doctor"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/store"
)

// Options configure a [Server]. StateDir, Credential and Events are
// required.
type Options struct {
	// StateDir is coagent8's state directory (absolute): state.db and
	// events.jsonl are read from it, shared with running MCP servers and
	// gates.
	StateDir string
	// Home is the user's home directory, shown as ~ by the diagnostic
	// redactor ("" = no home rule).
	Home string
	// Credential is the operator's Basic credential
	// ([LoadOrCreateCredential]).
	Credential Credential
	// Events receives the dashboard's own security events (refused
	// requests, lifecycle refusals). Required: a refusal nobody records is
	// not admitted as a design.
	Events event.Sink
	// Doctor produces the overview's report (backends, governance,
	// sandbox). nil shows the overview without it.
	Doctor func(context.Context) doctor.Report
	// Candidates is the candidate source (issue 16); nil until the
	// delegate job exists: the pages say so and actions refuse.
	Candidates Candidates
	// Poll is how often the state is checked for changes to push over
	// server-sent events (0 = 500 ms).
	Poll   time.Duration
	Logger *slog.Logger     // nil = discard
	Now    func() time.Time // nil = time.Now
}

// Server is the operator dashboard. Create it with [New], run it with
// [Server.Serve]; [Server.Close] releases the state database. Safe for
// concurrent use.
type Server struct {
	opts Options
	db   *store.DB
	red  *redact.Redactor
	csrf string
	auth *authenticator
	// badges is set by Handler (it needs the listening origin).
	badges *badges
	rec    *recorder
	tail   *eventTail
	tally  decisionTally
	view   *views
	hub    *hub
	over   *overview
	trim   trimmer
}

// CacheKiB is the SQLite page cache of each of the dashboard's state
// database connections, in KiB ([store.Options]), for every store the
// operator process opens (issue 17: idle RSS under 25 MiB). SQLite's
// default is 2,000 KiB per connection; the pages read the state in a few
// queries each, and what the small cache misses is read again from the OS
// page cache (BenchmarkOperatorPages keeps every page under 50 ms).
const CacheKiB = 64

// New validates opts and opens the state database (created empty when
// absent, never migrated or written). Missing options are a *fault.Error
// INVALID_INPUT with reason operator.options.
func New(ctx context.Context, opts Options) (*Server, error) {
	if !filepath.IsAbs(opts.StateDir) || opts.Credential.password.IsZero() || opts.Events == nil {
		return nil, fault.New(fault.InvalidInput, "operator.options",
			"the operator dashboard needs an absolute state directory, its credential and an event sink")
	}
	opts = withDefaults(opts)
	rec, err := newRecorder(opts.Events, opts.Now)
	if err != nil {
		return nil, err
	}
	db, err := store.OpenOptions(ctx, filepath.Join(opts.StateDir, "state.db"), store.Options{Busy: 2 * time.Second, CacheKiB: CacheKiB})
	if err != nil {
		return nil, stateErr(err)
	}
	v, err := newViews()
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &Server{opts: opts, db: db, red: redact.NewDiagnostic(opts.Home), csrf: newToken(), view: v,
		auth: newAuthenticator(opts.Credential, opts.Now), rec: rec,
		tail: &eventTail{path: filepath.Join(opts.StateDir, "events.jsonl")}, hub: newHub()}
	s.over = &overview{run: opts.Doctor, changed: s.hub.bump}
	s.tail.refresh()
	// Each SQLite connection keeps its own page cache (the integrity check
	// at open fills one): idle connections are closed soon, so an idle
	// dashboard holds one cache at most (issue 17: idle RSS).
	db.SQL().SetMaxIdleConns(1)
	db.SQL().SetConnMaxIdleTime(2 * time.Second)
	s.trim.touch(opts.Now())
	return s, nil
}

func withDefaults(o Options) Options {
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Candidates == nil {
		o.Candidates = noCandidates{}
	}
	return o
}

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Close releases the state database.
func (s *Server) Close() error { return s.db.Close() }

// URL returns the dashboard's address for a listener on ap.
func URL(ap netip.AddrPort) string { return "http://" + ap.String() + "/" }

// headerTimeout is how long a connection may take to send a request's
// headers, and how long a keep-alive connection may wait for its next
// request (net/http's default, no IdleTimeout and no ReadTimeout, keeps
// it open for ever: any local peer could hold connections until memory
// or descriptors ran out).
const headerTimeout = 10 * time.Second

// Serve answers on ln, which must listen on 127.0.0.1 or [::1] ([Listen]),
// until ctx ends; it then shuts down (in-flight requests get 2 s) and
// returns nil. It also starts the overview's first doctor run and the
// change watcher feeding live updates.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ap, err := parseLoopback(ln.Addr().String())
	if err != nil {
		return err
	}
	// DisableGeneralOptionsHandler: net/http would otherwise answer
	// "OPTIONS *" itself, before the chain.
	hs := &http.Server{Handler: s.Handler(ap), ReadHeaderTimeout: headerTimeout, IdleTimeout: headerTimeout,
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug),
		BaseContext:                  func(net.Listener) context.Context { return ctx }}
	go s.over.refresh(ctx)
	go s.watch(ctx)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("operator dashboard: %w", err)
	}
	return nil
}
