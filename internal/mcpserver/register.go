package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type toolFactory func() (*mcp.Tool, mcp.ToolHandler)

// register adds every tool. Profiles change only tools/list: a tool left
// out of the advertised list stays callable (contract.md §1).
func (s *Server) register(profile string) error {
	all := map[string]toolFactory{
		"consult": s.consultTool,
		"doctor":  s.doctorTool,
		"session": s.sessionTool,
		"cancel":  s.cancelTool,
	}
	for _, name := range advertised(profile) {
		if f, ok := all[name]; ok {
			t, h := f()
			s.mcp.AddTool(t, h)
		}
	}
	return nil
}

// advertised lists the tools of a profile in order.
func advertised(profile string) []string {
	switch profile {
	case "compact":
		return []string{"doctor", "consult", "session", "cancel"}
	}
	return []string{"consult", "doctor", "session", "cancel"}
}
