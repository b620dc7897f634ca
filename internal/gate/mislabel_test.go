package gate

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/egress"
)

// TestResponseReadAsEveryClientReads: the SDKs pick their reader from
// the request, not the response's Content-Type (a stream:true request is
// read as SSE whatever the label; a models or count_tokens answer as
// JSON), so the check reads every body both ways. Before, a body not
// labelled text/event-stream was checked as one JSON value only — deltas
// splitting the key, or SSE events ended by a lone CR, reached the
// client — and an SSE-labelled body's lines only as SSE data lines — a
// pretty-printed JSON line with the key \u-escaped reached it (red team
// rt5). A whole body is withheld (502); a stream ends with the error
// event; either way one security event, and the key's second half never
// reaches the client, decoded or not.
func TestResponseReadAsEveryClientReads(t *testing.T) {
	key := realKey(Anthropic)
	half := len(key) / 2
	delta := func(s string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + s + "\"}}\n\n"
	}
	split := delta(key[:half]) + delta(key[half:])
	clean := delta("hello ") + delta("world")
	pretty := "{\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"" + jsonEscapeAll(key) + "\"\n    }\n  ]\n}\n"
	cr := "data: {\"type\":\"ping\"}\rdata: {\"type\":\"error\",\"error\":{\"message\":\"" + jsonEscapeAll(key) + "\"}}\r\r"
	shadowed := `{"content":[{"type":"text","text":"` + jsonEscapeAll(key) + `","text":"hi"}]}`
	tests := []struct {
		name, ctype, body string
		wantStatus        int
		wantEcho          int
	}{
		{"split deltas labelled json", "application/json", split, 502, 1},
		{"split deltas labelled in upper case", "TEXT/EVENT-STREAM", split, 502, 1},
		{"split deltas without a label", "", split, 502, 1},
		{"escaped key in pretty json labelled sse", "text/event-stream", pretty, 200, 1},
		{"lone-CR events labelled json", "application/json", cr, 502, 1},
		{"escaped key in a shadowed member", "application/json", shadowed, 502, 1},
		{"clean deltas labelled json", "application/json", clean, 200, 0},
		{"clean json", "application/json", `{"content":[{"type":"text","text":"caf\u00e9 a\/b"}]}`, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, resp, body, _ := hostileCall(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil // no sniffed label
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.Write([]byte(tt.body))
			})
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d (%q)", resp.StatusCode, tt.wantStatus, body)
			}
			if n := countReason(f.events.Events(), ReasonEcho); n != tt.wantEcho {
				t.Errorf("%d %s security events, want %d", n, ReasonEcho, tt.wantEcho)
			}
			if strings.Contains(string(egress.DecodeEscapes([]byte(body))), key[half:]) {
				t.Errorf("the key's second half reached the client: %q", body)
			}
			if tt.wantEcho == 0 && body != tt.body {
				t.Errorf("clean body changed: got %q, want %q", body, tt.body)
			}
		})
	}
}
