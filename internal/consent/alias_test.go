package consent

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/policy"
)

// Short aliases keep the table tests readable.
type (
	mcpParams         = mcp.CallToolParams
	mcpResponses      = mcp.InputResponseMap
	mcpElicitResult   = mcp.ElicitResult
	policyDecision    = policy.Decision
	policyRulesConfig = policy.RulesConfig
	policyInput       = policy.Input
)

var (
	mcpDecline     = mcp.ElicitResult{Action: "decline"}
	mcpCancel      = mcp.ElicitResult{Action: "cancel"}
	policyNewRules = policy.NewRules
	policyDecide   = policy.Decide
)
