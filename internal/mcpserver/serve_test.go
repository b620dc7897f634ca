package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// records is a slog handler keeping every record at or above its level.
type records struct {
	level slog.Level
	mu    sync.Mutex
	got   []slog.Record
}

func (r *records) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
	return nil
}

// lines renders the records keep selects as "LEVEL message".
func (r *records) lines(keep func(slog.Record) bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.got {
		if keep(rec) {
			out = append(out, rec.Level.String()+" "+rec.Message)
		}
	}
	return out
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// brokenPipe accepts the first write (initialize's answer) and then fails
// as a write to a stdout whose reader is gone does.
type brokenPipe struct {
	mu sync.Mutex
	n  int
}

func (w *brokenPipe) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n++; w.n > 1 {
		return 0, &fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
	}
	return len(p), nil
}

// TestServeDisconnectIsDebug: a client that goes away — stdin EOF, or a
// broken pipe when it closed its end before reading the answer — ends
// Serve with nil and is logged at debug level only: nothing at the
// default (info) level, nothing at warn or error under COAGENT8_DEBUG.
func TestServeDisconnectIsDebug(t *testing.T) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	tests := []struct {
		name   string
		broken bool // the client closed stdout before reading ping's answer; else it closes stdin
		level  slog.Level
		// want are the records at or above level: at info every one (what
		// the host's stderr shows), at debug those at warn or above and
		// Serve's own (the SDK's info lines are debug output there).
		want []string
	}{
		{"EOF at info", false, slog.LevelInfo, nil},
		{"EOF at debug", false, slog.LevelDebug, []string{"DEBUG mcp session ended by the client"}},
		{"broken pipe at info", true, slog.LevelInfo, nil},
		{"broken pipe at debug", true, slog.LevelDebug, []string{"DEBUG mcp session ended by the client"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &records{level: tt.level}
			s := &Server{log: slog.New(h)}
			s.mcp = newSDKServer(s.log)
			pr, pw := io.Pipe()
			var out io.Writer = io.Discard
			go func() {
				if !tt.broken {
					io.WriteString(pw, initialize)
					pw.Close()
					return
				}
				io.WriteString(pw, initialize+ping) // stdin stays open
			}()
			if tt.broken {
				out = &brokenPipe{}
			}
			err := s.Serve(context.Background(), &StdioTransport{In: pr, Out: out})
			got := h.lines(func(r slog.Record) bool {
				return tt.level >= slog.LevelInfo || r.Level >= slog.LevelWarn || strings.HasPrefix(r.Message, "mcp session")
			})
			if d := cmp.Diff([]any{nil, tt.want}, []any{err, got}); d != "" {
				t.Errorf("Serve (-want +got):\n%s\nall records: %v", d, h.lines(func(slog.Record) bool { return true }))
			}
		})
	}
}

// TestDisconnected: the ends of a session that are the client going away,
// and the ones that are not (those Serve returns).
func TestDisconnected(t *testing.T) {
	stdout := func(err error) error { return &fs.PathError{Op: "write", Path: "/dev/stdout", Err: err} }
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"end of input", io.EOF, true},
		{"wrapped end of input", fmt.Errorf("read: %w", io.EOF), true},
		{"signal", context.Canceled, true},
		{"broken pipe on stdout", stdout(syscall.EPIPE), true},
		{"closed io.Pipe", io.ErrClosedPipe, true},
		{"socket reset", stdout(syscall.ECONNRESET), true},
		{"I/O error", stdout(syscall.EIO), false},
		{"disk full", stdout(syscall.ENOSPC), false},
		{"deadline", context.DeadlineExceeded, false},
		{"other", errors.New("broken pipe"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := disconnected(tt.err); got != tt.want {
				t.Errorf("disconnected(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
