package session

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/turn"
)

// A 1 MiB answer streamed in 10,000 deltas grows the database by at most
// 1.1× its size (AUD-P0-3: the original stored 54–112×).
func TestStreamedAnswerStorageAmplification(t *testing.T) {
	e := newEnv(t)
	s := e.open(t, Options{})
	ws := workspace(t)
	// Warm the schema pages up with one small turn, then measure.
	run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "warm"}, "up", "n")
	checkpoint(t, s)
	before := dbBytes(e)

	const total, n = 1 << 20, 10_000
	answer := streamText(total)
	l, err := s.Begin(context.Background(), turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"})
	if err != nil {
		t.Fatal(err)
	}
	step := len(answer) / n
	for i := 0; i < n; i++ {
		end := (i + 1) * step
		if i == n-1 {
			end = len(answer)
		}
		l.Delta(answer[i*step : end])
	}
	// The stream really went to the archive as chunks before the end.
	waitFor(t, func() bool {
		var stored int
		s.db.QueryRow("SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) FROM deltas").Scan(&stored)
		return stored >= total-flushBytes
	})
	if w := l.End(context.Background(), turn.End{Status: turn.Completed, Output: answer}); w != "" {
		t.Fatal(w)
	}
	checkpoint(t, s)
	growth := dbBytes(e) - before
	if ratio := float64(growth) / float64(total); ratio > 1.1 {
		t.Fatalf("database grew %d bytes for a %d-byte answer: %.2f× > 1.1×", growth, total, ratio)
	}
	t.Logf("growth %d bytes for %d: %.3f×", growth, total, float64(growth)/total)
	got, _ := s.Result(context.Background(), ws, l.Handle(), 0)
	if got.Output != answer {
		t.Fatal("archived answer differs")
	}
}

func streamText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"lock ", "the ", "map ", "before ", "writing; ", "ünïcode ", "代码 ", "\n"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()[:n]
}

// checkpoint moves the WAL into the database file so its size is real.
func checkpoint(t *testing.T, s *Store) {
	if _, err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
}

func dbBytes(e env) int64 {
	return fileSize(e.db) + fileSize(e.db+"-wal")
}

func TestEvictionOldestFirstWithinLimits(t *testing.T) {
	s := newEnv(t).open(t, Options{SessionBytes: 10_000, TotalBytes: 25_000})
	ws := workspace(t)
	ctx := context.Background()
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "first"}, strings.Repeat("a", 4000), "n").Handle()
	for i := 0; i < 3; i++ {
		run(t, s, turn.Begin{Handle: h, Workspace: ws, Backend: "claude", Prompt: "next"}, strings.Repeat("b", 4000), "n")
	}
	p, _ := s.History(ctx, ws, h, "", 0)
	size := 0
	for _, ev := range p.Events {
		size += len(ev.Text)
	}
	if size > 10_000 || p.Events[0].Turn == 1 {
		t.Fatalf("session holds %d bytes from turn %d; want ≤10000 with turn 1 evicted", size, p.Events[0].Turn)
	}
	last := p.Events[len(p.Events)-1]
	if last.Turn != 4 || last.Role != "assistant" {
		t.Fatalf("newest answer evicted: %+v", last)
	}
	for i := 0; i < 3; i++ {
		run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "other"}, strings.Repeat("c", 8000), "n")
	}
	var all int64
	s.db.QueryRow("SELECT SUM(bytes) FROM messages").Scan(&all)
	if all > 25_000 {
		t.Fatalf("archive holds %d bytes > total limit", all)
	}
}
