package governor

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/redact"
)

// Bounds of a job's activity lines (issue 16 scope 1, live progress).
const (
	// ActivityLines is how many recent lines a job keeps.
	ActivityLines = 20
	// ActivityLineRunes bounds one line, in runes, after redaction.
	ActivityLineRunes = 200
	// maxStreamLine bounds one buffered stream-json line; a longer one
	// (a large tool result) is skipped, never parsed in part.
	maxStreamLine = 1 << 20
	// ActivityFile is the file, in the job's directory, that holds its
	// activity lines for other processes (`coagent8 jobs JOB`).
	ActivityFile = "activity.txt"
)

// activity turns the agent's output into short activity lines: for
// Claude Code's stream-json "tool Name: summary" for a tool use, "text: …"
// for the agent's text; for Codex's app-server transcript see
// [parseCodex]. Each line is redacted with the answer profile, control-
// and bidi-escaped ([quarantine.Visible], line breaks too) and cut to [ActivityLineRunes]
// before it is kept: it is still untrusted (the agent chose it), so the
// surfaces show it fenced or labelled. Safe for concurrent use.
type activity struct {
	red   *redact.Redactor
	path  string                              // "" = memory only
	parse func(a *activity, line []byte) bool // one output line's activity lines; reports whether it added any

	mu    sync.Mutex
	part  []byte
	skip  bool // inside a line longer than maxStreamLine
	lines []string
}

// newActivity reads Claude Code's stream-json.
func newActivity(path string) *activity {
	return &activity{red: redact.NewAnswer(), path: path, parse: (*activity).parseClaude}
}

// newActivityFor reads the output rt's CLI writes to Job.Stdout: Codex's
// app-server JSON-RPC transcript, else Claude Code's stream-json.
func newActivityFor(rt delegation.Runtime, path string) *activity {
	a := newActivity(path)
	if rt.IsCodex() {
		a.parse = (*activity).parseCodex
	}
	return a
}

// Write takes stream-json bytes as they arrive; it never fails (the agent
// must not stall on its progress view).
func (a *activity) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, changed := len(p), false
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			a.buffer(p)
			break
		}
		a.buffer(p[:i])
		if !a.skip {
			changed = a.parse(a, a.part) || changed
		}
		a.part, a.skip, p = a.part[:0], false, p[i+1:]
	}
	if changed {
		a.persist()
	}
	return n, nil
}

func (a *activity) buffer(p []byte) {
	if a.skip || len(a.part)+len(p) > maxStreamLine {
		a.part, a.skip = a.part[:0], true
		return
	}
	a.part = append(a.part, p...)
}

// streamEvent is the part of a Claude Code stream-json event read here.
type streamEvent struct {
	Type    string `json:"type"`
	Message struct {
		Content []struct {
			Type  string         `json:"type"`
			Text  string         `json:"text"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"content"`
	} `json:"message"`
}

// parseClaude adds the activity lines of one stream-json line and
// reports whether it added any.
func (a *activity) parseClaude(line []byte) bool {
	var ev streamEvent
	if json.Unmarshal(line, &ev) != nil || ev.Type != "assistant" {
		return false
	}
	added := false
	for _, c := range ev.Message.Content {
		switch {
		case c.Type == "tool_use":
			a.add("tool " + c.Name + ": " + inputSummary(c.Input))
		case c.Type == "text" && strings.TrimSpace(c.Text) != "":
			a.add("text: " + strings.Join(strings.Fields(c.Text), " "))
		default:
			continue
		}
		added = true
	}
	return added
}

// add keeps line, redacted first (a cut must not leave half a secret
// that the redactor no longer recognises), then escaped and cut.
func (a *activity) add(line string) {
	line = oneLine(a.red.String(line))
	if utf8.RuneCountInString(line) > ActivityLineRunes {
		line = string([]rune(line)[:ActivityLineRunes-1]) + "…"
	}
	a.lines = append(a.lines, line)
	if len(a.lines) > ActivityLines {
		a.lines = a.lines[len(a.lines)-ActivityLines:]
	}
}

// persist writes the lines (already redacted) for other processes;
// replaced by rename, so a reader never sees half a file.
func (a *activity) persist() {
	if a.path == "" {
		return
	}
	tmp := a.path + ".tmp"
	if os.WriteFile(tmp, []byte(strings.Join(a.lines, "\n")+"\n"), 0o600) == nil {
		_ = os.Rename(tmp, a.path)
	}
}

// recent returns a copy of the kept lines, oldest first.
func (a *activity) recent() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.lines...)
}

// summaryKeys are the tool inputs worth showing, in this order; other
// inputs are named by key only.
var summaryKeys = []string{"command", "file_path", "path", "pattern", "url", "description"}

// inputSummary is a short view of a tool's input: the well-known fields'
// values, else the sorted key names.
func inputSummary(in map[string]any) string {
	var parts []string
	for _, k := range summaryKeys {
		if v, ok := in[k].(string); ok && v != "" {
			parts = append(parts, k+"="+strings.Join(strings.Fields(v), " "))
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, " ")
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "(" + strings.Join(keys, ", ") + ")"
}

// ReadActivity returns the activity lines stored in a job's directory
// (dir/ActivityFile), or nil. The lines were redacted and escaped when
// written; they are still the agent's text.
func ReadActivity(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, ActivityFile))
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > ActivityLines {
		lines = lines[len(lines)-ActivityLines:]
	}
	return lines
}

// JobActivity returns the recent activity lines of job id while this
// process runs it (nil otherwise), oldest first.
func (g *Governor) JobActivity(id string) []string {
	if r := g.live.get(id); r != nil {
		return r.activity.recent()
	}
	return nil
}

// oneLine is [quarantine.Visible] for a value shown on one line of the
// admission form or an activity listing: a line break the agent put in a
// file or tool name would otherwise start a line of its own that reads
// like coagent8's ("Scan findings (0):", "approve: true"). Visible already
// shows invisible characters as escapes.
func oneLine(s string) string {
	return lineBreaks.Replace(quarantine.Visible(s))
}

var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`, "\u2028", `\u2028`, "\u2029", `\u2029`)
