package governor

import (
	"encoding/json"
	"strings"
)

// codexNote is the part of a Codex app-server notification read here
// (codex 0.169.0, `codex app-server generate-json-schema`:
// ItemStartedNotification / ItemCompletedNotification and ThreadItem).
type codexNote struct {
	Method string `json:"method"`
	Params struct {
		Item codexItem `json:"item"`
	} `json:"params"`
}

// codexItem is the union of the ThreadItem variants shown as activity.
type codexItem struct {
	Type string `json:"type"`
	// commandExecution: Command is the full argv string
	// ("/usr/bin/bash -lc '…'"), CommandActions the parsed commands.
	Command        string `json:"command"`
	CommandActions []struct {
		Command string `json:"command"`
	} `json:"commandActions"`
	// fileChange.
	Changes []struct {
		Path string          `json:"path"`
		Kind json.RawMessage `json:"kind"` // {"type":"add"|"delete"|"update","move_path":…}
	} `json:"changes"`
	// mcpToolCall (Server, Tool, Arguments), dynamicToolCall (Tool,
	// Arguments).
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// webSearch.
	Query string `json:"query"`
	// agentMessage.
	Text string `json:"text"`
	// reasoning: the summary parts (the raw reasoning content is not
	// shown: the summary is what Codex itself surfaces).
	Summary []string `json:"summary"`
}

// parseCodex adds the activity lines of one app-server JSON-RPC line and
// reports whether it added any:
//
//   - item/started commandExecution: "command: sed -i … main.txt" (the
//     parsed commands, else the full command line);
//   - item/started fileChange: "edit: update a.go, add b.go";
//   - item/started mcpToolCall: "tool server/name: summary";
//     dynamicToolCall "tool name: summary"; webSearch "search: query";
//   - item/completed agentMessage: "text: …"; reasoning with a summary:
//     "reasoning: …".
//
// Text is taken from the completed item only, never from the
// item/agentMessage/delta or reasoning delta notifications: a delta can
// end in the middle of a credential, whose first half the redactor no
// longer recognises, and that half would be on disk (activity.txt) before
// the rest arrived. Responses, requests and other notifications add none.
func (a *activity) parseCodex(line []byte) bool {
	var n codexNote
	if json.Unmarshal(line, &n) != nil {
		return false
	}
	it := n.Params.Item
	var out string
	switch n.Method + " " + it.Type {
	case "item/started commandExecution":
		out = "command: " + codexCommand(it)
	case "item/started fileChange":
		out = "edit: " + codexChanges(it)
	case "item/started mcpToolCall":
		out = "tool " + it.Server + "/" + it.Tool + ": " + codexArgs(it.Arguments)
	case "item/started dynamicToolCall":
		out = "tool " + it.Tool + ": " + codexArgs(it.Arguments)
	case "item/started webSearch":
		out = "search: " + flat(it.Query)
	case "item/completed agentMessage":
		out = "text: " + flat(it.Text)
	case "item/completed reasoning":
		out = "reasoning: " + flat(strings.Join(it.Summary, " "))
	default:
		return false
	}
	if strings.TrimSpace(out[strings.Index(out, ":")+1:]) == "" {
		return false
	}
	a.add(out)
	return true
}

// codexCommand is the parsed commands of a commandExecution item, joined
// by "; ", else its full command line.
func codexCommand(it codexItem) string {
	var cmds []string
	for _, c := range it.CommandActions {
		if c.Command != "" {
			cmds = append(cmds, flat(c.Command))
		}
	}
	if len(cmds) == 0 {
		return flat(it.Command)
	}
	return strings.Join(cmds, "; ")
}

// codexChanges is "kind path" per change of a fileChange item.
func codexChanges(it codexItem) string {
	parts := make([]string, 0, len(it.Changes))
	for _, c := range it.Changes {
		var kind struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(c.Kind, &kind) != nil || kind.Type == "" {
			// Older transcripts spell the kind as a bare string.
			_ = json.Unmarshal(c.Kind, &kind.Type)
		}
		if kind.Type == "" {
			kind.Type = "change"
		}
		parts = append(parts, kind.Type+" "+c.Path)
	}
	return strings.Join(parts, ", ")
}

// codexArgs summarises a tool call's arguments like a Claude Code tool
// input ([inputSummary]); arguments that are not an object are named,
// not shown.
func codexArgs(raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil || in == nil {
		return "(arguments)"
	}
	return inputSummary(in)
}

// flat joins s's words with single spaces. Line breaks are gone here;
// [oneLine] still escapes the separators strings.Fields does not split on.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
