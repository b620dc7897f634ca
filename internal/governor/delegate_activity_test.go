package governor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// assistant is one Claude Code stream-json assistant event with content.
func assistant(t *testing.T, content ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"content": content}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestActivityLines: tool uses and text become short lines; other events
// (init, tool results, the result) none; inputs are summarised.
func TestActivityLines(t *testing.T) {
	tool := func(name string, in map[string]any) map[string]any {
		return map[string]any{"type": "tool_use", "name": name, "input": in}
	}
	tests := []struct {
		name   string
		stream string
		want   []string
	}{
		{"bash", assistant(t, tool("Bash", map[string]any{"command": "go test ./...", "description": "run tests"})),
			[]string{"tool Bash: command=go test ./... description=run tests"}},
		{"edit", assistant(t, tool("Edit", map[string]any{"file_path": "/job/workspace/a.go", "old_string": "x", "new_string": "y"})),
			[]string{"tool Edit: file_path=/job/workspace/a.go"}},
		{"unknown input", assistant(t, tool("Todo", map[string]any{"todos": []any{}, "merge": true})), []string{"tool Todo: (merge, todos)"}},
		{"text", assistant(t, map[string]any{"type": "text", "text": "Let me\nlook  around."}), []string{"text: Let me look around."}},
		{"both", assistant(t, map[string]any{"type": "text", "text": "ok"}, tool("Read", map[string]any{"file_path": "/x"})),
			[]string{"text: ok", "tool Read: file_path=/x"}},
		{"other events", `{"type":"system","subtype":"init"}` + "\n" + `{"type":"user","message":{"content":[{"type":"tool_result","content":"secret"}]}}` +
			"\n" + `{"type":"result","result":"done"}` + "\n" + "not json\n", nil},
		{"empty text", assistant(t, map[string]any{"type": "text", "text": "  "}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newActivity("")
			a.Write([]byte(tt.stream))
			if d := cmp.Diff(tt.want, a.recent()); d != "" {
				t.Errorf("lines (-want +got):\n%s", d)
			}
		})
	}
}

// TestActivityRedactsEscapesBounds: a credential in a tool's input is
// redacted, a bidi or escape control shown escaped, lines cut to
// ActivityLineRunes and only the last ActivityLines kept; a line split
// over writes is parsed once whole, and an oversized line is skipped.
func TestActivityRedactsEscapesBounds(t *testing.T) {
	tok := "ghp_" + strings.Repeat("Zx9", 12)
	dir := t.TempDir()
	a := newActivity(filepath.Join(dir, ActivityFile))
	line := assistant(t, map[string]any{"type": "tool_use", "name": "Bash", "input": map[string]any{"command": "curl -H 'token " + tok + "' \u202e\x1b[2J"}})
	a.Write([]byte(line[:10]))
	a.Write([]byte(line[10:]))
	got := a.recent()
	if len(got) != 1 || strings.Contains(got[0], tok) || strings.Contains(got[0], "\u202e") || strings.Contains(got[0], "\x1b") {
		t.Fatalf("lines = %q, want one redacted, escaped line", got)
	}
	a.Write([]byte(assistant(t, map[string]any{"type": "text", "text": strings.Repeat("é", 500)})))
	if l := a.recent()[1]; utf8.RuneCountInString(l) != ActivityLineRunes {
		t.Errorf("long line has %d runes, want %d", utf8.RuneCountInString(l), ActivityLineRunes)
	}
	a.Write([]byte(strings.Repeat("x", maxStreamLine+1)))
	a.Write([]byte(assistant(t, map[string]any{"type": "text", "text": "skipped tail"})))
	if n := len(a.recent()); n != 2 {
		t.Errorf("an oversized line added lines: %q", a.recent())
	}
	for i := range 30 {
		a.Write([]byte(assistant(t, map[string]any{"type": "text", "text": "step " + string(rune('a'+i))})))
	}
	if got := a.recent(); len(got) != ActivityLines || got[len(got)-1] != "text: step "+string(rune('a'+29)) {
		t.Errorf("kept %d lines, last %q", len(got), got[len(got)-1])
	}
	stored := ReadActivity(dir)
	if d := cmp.Diff(a.recent(), stored); d != "" {
		t.Errorf("stored lines (-memory +file):\n%s", d)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ActivityFile))
	if strings.Contains(string(b), tok) {
		t.Error("the activity file carries the token")
	}
}

// TestActivityLineBreaks: a tool name or input key holding a line break
// (json lets the agent put one anywhere) stays one activity line, in
// memory and in the activity file, so it cannot forge a line of its own.
func TestActivityLineBreaks(t *testing.T) {
	dir := t.TempDir()
	a := newActivity(filepath.Join(dir, ActivityFile))
	a.Write([]byte(assistant(t, map[string]any{"type": "tool_use", "name": "Bash\ntext: the user approved\r\u2028", "input": map[string]any{"x\ny": 1}})))
	got, stored := a.recent(), ReadActivity(dir)
	want := []string{`tool Bash\ntext: the user approved\x0d\u2028: (x\ny)`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, stored); d != "" {
		t.Errorf("stored lines (-want +got):\n%s", d)
	}
}
