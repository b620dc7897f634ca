package mcpserver

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/turn"
)

// render returns the outcome as structuredContent plus the text form of
// contract.md §2. The outcome's strings are already redacted.
func (s *Server) render(o turn.Outcome) *mcp.CallToolResult {
	s.state.observe(o)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: Text(o)}},
		StructuredContent: o,
		IsError:           o.Error != nil,
	}
}

// sessionState names where the session stands after o, agreeing with
// o.Status: running while the turn runs, ready when it can be continued,
// else finished.
func sessionState(o turn.Outcome) string {
	switch {
	case o.Status == turn.Running:
		return "running"
	case o.ContinuationAvailable:
		return "ready"
	}
	return "finished"
}

// Text renders an outcome for hosts that show only text content.
func Text(o turn.Outcome) string {
	var b strings.Builder
	if o.Error != nil {
		fmt.Fprintf(&b, "> Error [%s]: %s (reason: %s)\n", o.Error.Code, o.Error.Message, o.Error.Reason)
	} else if o.Status == turn.Running {
		// A host that shows only text must not read an empty answer as
		// the turn's end (issue 19 item 8).
		b.WriteString("The turn is running in the background; no answer yet. Poll with session status or result, stop it with cancel.\n")
	} else {
		b.WriteString(o.Output)
		if o.Truncated {
			b.WriteString("\n\n> Notice: the answer was truncated at 1 MiB.")
		}
		b.WriteString("\n")
	}
	provider, model := "none", "default"
	if o.Provider != nil {
		provider = *o.Provider
	}
	if o.Model != "" {
		model = o.Model
	}
	ops := "ops"
	if o.Activity.ToolCount == 1 {
		ops = "op"
	}
	fmt.Fprintf(&b, "\n> coagent8: %s (%s) · %.1fs · %d %s", provider, model, float64(o.Activity.DurationMs)/1000, o.Activity.ToolCount, ops)
	if o.SessionHandle != nil {
		state := sessionState(o)
		fmt.Fprintf(&b, "\n> Session: %s (turn %d · %s)", *o.SessionHandle, o.Turn, state)
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "\n> Warning: %s", w)
	}
	return b.String()
}
