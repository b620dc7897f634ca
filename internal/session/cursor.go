package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"

	"github.com/coagent8/coagent8/internal/fault"
)

// MaxCursorLen bounds an encoded cursor (contract.md §6).
const MaxCursorLen = 512

// cursor is the position of the next history page: message Seq from byte
// Offset, valid only at session revision Rev. Tag binds it to the handle.
type cursor struct {
	V      int    `json:"v"`
	Tag    string `json:"h"`
	Rev    int64  `json:"r"`
	Seq    int64  `json:"s"`
	Offset int64  `json:"o"`
}

var errCursor = fault.New(fault.InvalidInput, "history.cursor", "Invalid history cursor.")

var errChanged = fault.New(fault.HistoryChanged, "history.changed",
	"Conversation updated during pagination; restart without a cursor to read the current canonical messages.")

// handleTag is a short digest of the handle: a cursor from one session is
// rejected by another without revealing either handle.
func handleTag(handle string) string {
	sum := sha256.Sum256([]byte(handle))
	return hex.EncodeToString(sum[:6])
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor parses an opaque cursor. Anything malformed, oversized or
// out of range is INVALID_INPUT "Invalid history cursor."; it never panics.
func decodeCursor(s string) (cursor, error) {
	if len(s) == 0 || len(s) > MaxCursorLen {
		return cursor{}, errCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, errCursor
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c cursor
	if err := dec.Decode(&c); err != nil || dec.More() {
		return cursor{}, errCursor
	}
	if c.V != 1 || len(c.Tag) != 12 || c.Rev < 0 || c.Seq < 1 || c.Offset < 0 {
		return cursor{}, errCursor
	}
	return c, nil
}
