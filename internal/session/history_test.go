package session

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// walk reads every page and reassembles the messages by sequence.
func walk(t *testing.T, s *Store, ws, h string, limit int, between func(page int)) (map[int64]string, error) {
	got := map[int64]string{}
	cur := ""
	for page := 0; ; page++ {
		p, err := s.History(context.Background(), ws, h, cur, limit)
		if err != nil {
			return got, err
		}
		b, _ := json.Marshal(p)
		if len(b) > MaxPageBytes {
			t.Fatalf("page %d is %d bytes > %d", page, len(b), MaxPageBytes)
		}
		if len(p.Events) > limit || (len(p.Events) == 0 && !p.Complete) {
			t.Fatalf("page %d has %d events (limit %d, complete %v)", page, len(p.Events), limit, p.Complete)
		}
		for _, ev := range p.Events {
			if ev.Fragment != nil && ev.Fragment.OffsetBytes != int64(len(got[ev.Sequence])) {
				t.Fatalf("fragment offset %d, have %d bytes", ev.Fragment.OffsetBytes, len(got[ev.Sequence]))
			}
			got[ev.Sequence] += ev.Text
		}
		if p.Complete {
			return got, nil
		}
		if len(p.NextCursor) > MaxCursorLen {
			t.Fatalf("cursor of %d chars", len(p.NextCursor))
		}
		cur = p.NextCursor
		if between != nil {
			between(page)
		}
	}
}

func stored(t *testing.T, s *Store, h string) map[int64]string {
	rows, err := s.db.Query("SELECT seq, body FROM messages WHERE handle = ?", h)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var seq int64
		var body string
		rows.Scan(&seq, &body)
		out[seq] = body
	}
	return out
}

func randomText(r *rand.Rand, n int) string {
	alphabet := []string{"a", "b", " ", "\n", "é", "中", "😀", "\"", "<", "\\", "\x01"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// Walking all pages reassembles every message exactly, whatever the sizes
// (tiny to several pages, multi-byte and escape-heavy text) and limits.
func TestPaginationReassemblesEveryMessage(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	ws := workspace(t)
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 4; trial++ {
		var h string
		for i := 0; i < 1+r.IntN(30); i++ {
			sizes := []int{1, 50, 5000, 130_000, 600_000}
			answer := randomText(r, sizes[r.IntN(len(sizes))])
			h = run(t, s, turn.Begin{Handle: h, Workspace: ws, Backend: "claude", Prompt: randomText(r, 1+r.IntN(300))}, answer, "n").Handle()
		}
		limit := 1 + r.IntN(MaxPageEvents)
		got, err := walk(t, s, ws, h, limit, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := stored(t, s, h)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d messages read, %d stored", trial, len(got), len(want))
		}
		for seq, body := range want {
			if got[seq] != body {
				t.Fatalf("trial %d: message %d differs (%d vs %d bytes)", trial, seq, len(got[seq]), len(body))
			}
		}
	}
}

// A turn finishing during the walk moves the revision: the next page is
// HISTORY_CHANGED, never a page that silently skips the new answer.
func TestWriteDuringWalkIsHistoryChanged(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	ws := workspace(t)
	h := ""
	for i := 0; i < 5; i++ {
		h = run(t, s, turn.Begin{Handle: h, Workspace: ws, Backend: "claude", Prompt: "q"}, strings.Repeat("x", 100_000), "n").Handle()
	}
	_, err := walk(t, s, ws, h, 2, func(page int) {
		if page == 1 {
			run(t, s, turn.Begin{Handle: h, Workspace: ws, Backend: "claude", Prompt: "late"}, "final answer", "n")
		}
	})
	if !fault.HasCode(err, fault.HistoryChanged) {
		t.Fatalf("err = %v, want HISTORY_CHANGED", err)
	}
	got, err := walk(t, s, ws, h, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, body := range got {
		found = found || body == "final answer"
	}
	if !found {
		t.Fatal("restarted walk misses the final answer")
	}
}

func TestMalformedCursorsAreInvalidInput(t *testing.T) {
	s := newEnv(t).open(t, Options{})
	ws := workspace(t)
	h := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, strings.Repeat("y", 300_000), "n").Handle()
	other := run(t, s, turn.Begin{Workspace: ws, Backend: "claude", Prompt: "q"}, strings.Repeat("y", 300_000), "n").Handle()
	po, _ := s.History(context.Background(), ws, other, "", 1)
	for _, c := range []string{"!!", "e30", strings.Repeat("A", 600), cursor{V: 2}.encode(),
		cursor{V: 1, Tag: handleTag(h), Seq: -1}.encode(), po.NextCursor} {
		if _, err := s.History(context.Background(), ws, h, c, 1); !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("cursor %.40q: err = %v, want INVALID_INPUT", c, err)
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(cursor{V: 1, Tag: handleTag("syn_sess_x"), Rev: 3, Seq: 9, Offset: 100}.encode())
	f.Add("")
	f.Add("eyJ2IjoxfQ")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s)
		if err != nil {
			if !fault.HasCode(err, fault.InvalidInput) {
				t.Fatalf("error %v is not INVALID_INPUT", err)
			}
			return
		}
		if c.V != 1 || c.Seq < 1 || c.Offset < 0 || c.Rev < 0 || len(s) > MaxCursorLen {
			t.Fatalf("accepted invalid cursor %+v", c)
		}
		if again, err := decodeCursor(c.encode()); err != nil || again != c {
			t.Fatalf("round trip: %+v, %v", again, err)
		}
	})
}
