package session

import (
	"context"
	"time"
	"unicode/utf8"
)

// Page bounds (contract.md §6): at most MaxPageEvents events and
// MaxPageBytes of JSON; text gets half the usable budget and a page stops
// when less than minTextBudget of it is left.
const (
	MaxPageEvents = 100
	DefaultEvents = 50
	MaxPageBytes  = 240 << 10
	pageReserve   = 4 << 10 // envelope and cursor
	eventOverhead = 256     // JSON of an event without its text
	textBudget    = (MaxPageBytes - pageReserve) / 2
	minTextBudget = 4096
)

// Page is one page of a session's history.
type Page struct {
	SchemaVersion int     `json:"schemaVersion"`
	SessionHandle string  `json:"sessionHandle"`
	Events        []Event `json:"events"`
	// NextCursor continues the walk; "" when Complete.
	NextCursor string `json:"nextCursor,omitempty"`
	Complete   bool   `json:"complete"`
}

// Event is one message, or a fragment of one split at a UTF-8 boundary.
type Event struct {
	Sequence  int64     `json:"sequence"`
	Turn      int       `json:"turn"`
	Role      string    `json:"role"` // user | assistant
	Timestamp time.Time `json:"timestamp"`
	Text      string    `json:"text"`
	// Partial marks an answer cut short by a failure or a server exit.
	Partial  bool      `json:"partial,omitempty"`
	Fragment *Fragment `json:"fragment,omitempty"`
}

// Fragment locates a split message's text: bytes [OffsetBytes,
// OffsetBytes+len(Text)) of TotalBytes; Complete on its last fragment.
type Fragment struct {
	OffsetBytes int64 `json:"offsetBytes"`
	TotalBytes  int64 `json:"totalBytes"`
	Complete    bool  `json:"complete"`
}

type msgMeta struct {
	seq, total, created int64
	turn                int
	role                string
	complete            bool
}

// History returns one page of the session's history (workspace-scoped).
// cursor "" starts at the beginning; limit 0 means DefaultEvents. A cursor
// taken at another revision is HISTORY_CHANGED; a malformed one is
// INVALID_INPUT.
func (s *Store) History(ctx context.Context, workspace, handle, cur string, limit int) (Page, error) {
	r, err := s.lookup(ctx, workspace, handle)
	if err != nil {
		return Page{}, err
	}
	pos := cursor{V: 1, Tag: handleTag(handle), Rev: r.revision, Seq: 1}
	if cur != "" {
		if pos, err = decodeCursor(cur); err != nil {
			return Page{}, err
		}
		if pos.Tag != handleTag(handle) {
			return Page{}, errCursor
		}
		if pos.Rev != r.revision {
			return Page{}, errChanged
		}
	}
	if limit <= 0 || limit > MaxPageEvents {
		limit = DefaultEvents
	}
	return s.page(ctx, handle, pos, limit)
}

func (s *Store) page(ctx context.Context, handle string, pos cursor, limit int) (Page, error) {
	metas, err := s.metas(ctx, handle, pos.Seq, limit)
	if err != nil {
		return Page{}, err
	}
	p := Page{SchemaVersion: 1, SessionHandle: handle, Events: []Event{}}
	budget := textBudget
	for i, m := range metas {
		off := int64(0)
		if i == 0 && m.seq == pos.Seq {
			off = pos.Offset
		}
		if len(p.Events) == limit || (len(p.Events) > 0 && budget < minTextBudget) {
			pos.Seq, pos.Offset = m.seq, off
			p.NextCursor = pos.encode()
			return p, nil
		}
		ev, next, err := s.event(ctx, handle, m, off, &budget)
		if err != nil {
			return Page{}, err
		}
		p.Events = append(p.Events, ev)
		if next >= 0 { // the message continues on the next page
			pos.Seq, pos.Offset = m.seq, next
			p.NextCursor = pos.encode()
			return p, nil
		}
	}
	p.Complete = true
	return p, nil
}

// metas lists up to limit+1 messages from seq on (the extra one tells
// whether a cursor is needed).
func (s *Store) metas(ctx context.Context, handle string, seq int64, limit int) ([]msgMeta, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, turn, role, bytes, complete, created_at FROM messages
		WHERE handle = ? AND seq >= ? ORDER BY seq LIMIT ?`, handle, seq, limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []msgMeta
	for rows.Next() {
		var m msgMeta
		if err := rows.Scan(&m.seq, &m.turn, &m.role, &m.total, &m.complete, &m.created); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// event reads as much of message m from off as the budget allows, cut at a
// UTF-8 boundary. next is the offset to continue at, or -1 when the
// message ended.
func (s *Store) event(ctx context.Context, handle string, m msgMeta, off int64, budget *int) (Event, int64, error) {
	want := min(int64(*budget), m.total-off)
	var raw []byte
	err := s.db.QueryRowContext(ctx, `SELECT substr(CAST(body AS BLOB), ?, ?) FROM messages WHERE seq = ?`,
		off+1, want, m.seq).Scan(&raw)
	if err != nil {
		return Event{}, 0, err
	}
	n := fit(raw, *budget, off+int64(len(raw)) == m.total)
	*budget -= eventOverhead + encodedLen(raw[:n])
	text := string(raw[:n])
	ev := Event{Sequence: m.seq, Turn: m.turn, Role: m.role, Timestamp: time.UnixMilli(m.created).UTC(),
		Text: text, Partial: !m.complete}
	end := off + int64(n)
	if off > 0 || end < m.total {
		ev.Fragment = &Fragment{OffsetBytes: off, TotalBytes: m.total, Complete: end == m.total}
	}
	if end < m.total {
		return ev, end, nil
	}
	return ev, -1, nil
}

// fit returns how many leading bytes of b, ending on a rune boundary, fit
// in budget once JSON-escaped. It returns at least one rune so every page
// makes progress; atEnd says b ends the message (no rune was cut).
func fit(b []byte, budget int, atEnd bool) int {
	used, i := 0, 0
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && !atEnd && !utf8.FullRune(b[i:]) {
			break // a rune cut by the read window: leave it for the next page
		}
		c := runeCost(r, size)
		if used+c > budget && i > 0 {
			break
		}
		used += c
		i += size
	}
	return i
}

func encodedLen(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		n += runeCost(r, size)
		i += size
	}
	return n
}

// runeCost bounds the bytes encoding/json writes for one rune.
func runeCost(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029 || r == utf8.RuneError:
		return 6
	}
	return size
}
