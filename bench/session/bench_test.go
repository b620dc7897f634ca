// Package session benchmarks the durable session archive against the
// in-memory session table (no history) on the same streamed turn.
//
//	go test ./bench/session -run '^$' -bench . -benchtime 20x
package session

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/session"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/turn"
)

const (
	answerBytes = 1 << 20
	deltas      = 10_000
)

// streamer is a backend that streams a 1 MiB answer in 10,000 deltas and
// times every Delta call (the history write path during streaming).
type streamer struct {
	text string
	lat  []time.Duration
}

func (s *streamer) Name() string                        { return "claude" }
func (s *streamer) Probe(context.Context) adapter.Probe { return adapter.Probe{} }
func (s *streamer) Run(_ context.Context, t adapter.Turn) (adapter.Result, error) {
	step := len(s.text) / deltas
	for i := 0; i < deltas; i++ {
		start := time.Now()
		t.Observer.Delta(s.text[i*step : (i+1)*step])
		s.lat = append(s.lat, time.Since(start))
	}
	return adapter.Result{Text: s.text, SessionID: "native", Model: "m"}, nil
}

func openStore(b *testing.B) *session.Store {
	dir := b.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "state.db"), 0)
	if err != nil {
		b.Fatal(err)
	}
	s, err := session.Open(context.Background(), session.Options{DB: db, LockDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(); db.Close() })
	return s
}

func runTurns(b *testing.B, sessions turn.Sessions) (*streamer, time.Duration) {
	be := &streamer{text: strings.Repeat("streamed answer text ", answerBytes/21+1)[:answerBytes]}
	r, err := turn.New(turn.Options{Env: config.FromList([]string{"HOME=/nonexistent"}), Backends: []adapter.Backend{be}, Sessions: sessions})
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		o := r.Run(context.Background(), turn.Request{Backend: "claude", Prompt: "q", Workspace: ws})
		if o.Status != turn.Completed || len(o.Warnings) > 0 {
			b.Fatalf("outcome %+v", o.Error)
		}
	}
	return be, time.Since(start) / time.Duration(b.N)
}

func p99(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*99/100]
}

// BenchmarkStreamedTurn runs a 1 MiB / 10,000-delta turn with the
// in-memory table (baseline) and with the durable archive.
func BenchmarkStreamedTurn(b *testing.B) {
	var base time.Duration
	b.Run("memory", func(b *testing.B) {
		be, per := runTurns(b, turn.NewMemory())
		base = per
		b.ReportMetric(float64(p99(be.lat).Nanoseconds()), "p99-delta-ns")
	})
	b.Run("session", func(b *testing.B) {
		be, per := runTurns(b, openStore(b))
		b.ReportMetric(float64(p99(be.lat).Nanoseconds()), "p99-delta-ns")
		b.ReportMetric(float64(answerBytes)/per.Seconds()/(1<<20), "MiB/s")
		if base > 0 {
			b.ReportMetric(float64(per-base)/float64(time.Millisecond), "added-ms/turn")
		}
	})
}

// BenchmarkHistoryPage reads every page of a ~10 MiB session.
func BenchmarkHistoryPage(b *testing.B) {
	s := openStore(b)
	ws := b.TempDir()
	text := strings.Repeat("é history page text ", (1<<20)/21)
	h := ""
	for i := 0; i < 9; i++ {
		l, err := s.Begin(context.Background(), turn.Begin{Handle: h, Workspace: ws, Backend: "claude", Prompt: "q"})
		if err != nil {
			b.Fatal(err)
		}
		h = l.Handle()
		l.End(context.Background(), turn.End{Status: turn.Completed, Output: text})
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cur := ""
		for {
			start := time.Now()
			p, err := s.History(context.Background(), ws, h, cur, 100)
			lat = append(lat, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			if p.Complete {
				break
			}
			cur = p.NextCursor
		}
	}
	b.ReportMetric(float64(p99(lat).Microseconds()), "p99-page-µs")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-page-µs")
	b.ReportMetric(float64(len(lat)/b.N), "pages")
}
