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

// Text renders an outcome for hosts that show only text content.
func Text(o turn.Outcome) string {
	var b strings.Builder
	if o.Error != nil {
		fmt.Fprintf(&b, "> Error [%s]: %s (reason: %s)\n", o.Error.Code, o.Error.Message, o.Error.Reason)
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
	fmt.Fprintf(&b, "\n> CoAgent: %s (%s) · %.1fs · %d %s", provider, model, float64(o.Activity.DurationMs)/1000, o.Activity.ToolCount, ops)
	if o.SessionHandle != nil {
		state := "finished"
		if o.ContinuationAvailable {
			state = "ready"
		}
		fmt.Fprintf(&b, "\n> Session: %s (turn %d · %s)", *o.SessionHandle, o.Turn, state)
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(&b, "\n> Warning: %s", w)
	}
	return b.String()
}
