package mcpserver

import (
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type toolFactory func() (*mcp.Tool, mcp.ToolHandler)

// register adds every tool of every profile, then hides from tools/list
// those the profile does not advertise: a hidden tool stays callable
// (contract.md §1).
func (s *Server) register(profile string) error {
	all := map[string]toolFactory{
		"consult":  s.consultTool,
		"review":   s.reviewTool,
		"doctor":   s.doctorTool,
		"session":  s.sessionTool,
		"cancel":   s.cancelTool,
		"issue":    s.issueTool,
		"delegate": s.delegateTool,
		// request_admission only asks the user (delegate jobs' admission
		// by elicitation, admission.go); it admits nothing by itself.
		"request_admission": s.admissionTool,
	}
	maps.Copy(all, s.aliasTools())
	handlers := map[string]mcp.ToolHandler{}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		t, h := all[name]()
		h = s.recovered(name, h)
		s.mcp.AddTool(t, h)
		handlers[name] = h
	}
	t, h := s.runTool(handlers)
	s.mcp.AddTool(t, s.recovered(t.Name, h))
	s.mcp.AddReceivingMiddleware(listFilter(profile), refuseSetLevel)
	// Added last, so it wraps every other middleware and the SDK's own
	// method handlers.
	s.mcp.AddReceivingMiddleware(s.recoverMethods)
	return nil
}
