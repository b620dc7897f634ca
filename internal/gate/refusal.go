package gate

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// refusalMessage is the error message a CLI prints for a refusal: the
// reason and, for a budget, the amounts and what to do. a may be nil.
func refusalMessage(reason string, a *admission) string {
	msg := "coagent8 gate refused the request: " + reason
	if a == nil {
		return msg
	}
	l, r := a.grant.Limits, a.reserved
	switch reason {
	case ReasonRequestSpend:
		return msg + fmt.Sprintf(": this request reserves $%.6f, more than the grant's whole spend budget of $%.6f; "+
			"create a grant with --max-usd of at least %.6f, or ask for fewer output tokens (max_tokens)", r.Spend.Dollars(), l.Spend.Dollars(), r.Spend.Dollars())
	case ReasonRequestTokens:
		return msg + fmt.Sprintf(": this request reserves %d tokens (body bytes plus its output limit), more than the grant's whole token budget of %d; "+
			"create a grant with --max-tokens of at least %d, or ask for fewer output tokens (max_tokens)", r.Tokens, l.Tokens, r.Tokens)
	case ReasonBudgetSpend, ReasonBudgetTokens, ReasonBudgetRequests:
		return msg + fmt.Sprintf(": the grant's budget is used up (limits: %d requests, %d tokens, $%.6f; this request reserves %d tokens, $%.6f); "+
			"create a new grant to continue", l.Requests, l.Tokens, l.Spend.Dollars(), r.Tokens, r.Spend.Dollars())
	case ReasonBudgetUnmetered:
		return msg + fmt.Sprintf(": the grant's %d unmetered requests (token counts, model lists) in this gate are used up; create a new grant to continue", unmeteredAllowance(l.Requests))
	case ReasonBudgetReserved:
		return msg + ": requests in flight hold the rest of the grant's budget; retry when they finish"
	case ReasonProviderFetch:
		return msg + ": an image or document given by URL would be fetched by the provider itself; send it inline (base64 or a data: URL)"
	case ReasonProviderState:
		return msg + ": the request names content the provider stores (an OpenAI previous_response_id, conversation, item reference, reasoning item by id or file_id; an Anthropic file source or container_upload), which the gate cannot size or decide; send the content inline in the request"
	case ReasonHostedTool:
		return msg + `: only tools the client runs itself are admitted, not the provider's hosted tools (web search, web fetch, MCP); for Codex set web_search="disabled"`
	}
	return msg
}

// ReasonHeader is the response header naming the gate's reason for a
// refusal (issue 18, bad input).
const ReasonHeader = "X-Coagent8-Gate-Reason"

// writeGateError writes an error body both CLIs understand and print:
// Anthropic reads error.type/message, OpenAI error.code/message. A status
// that must not be retried also says so in x-should-retry, which the
// Anthropic and OpenAI SDKs honour before their own status rules.
func writeGateError(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(ReasonHeader, reason)
	w.Header().Set("X-Should-Retry", strconv.FormatBool(code == 429 || code >= 500))
	w.WriteHeader(code)
	body, _ := json.Marshal(map[string]any{"type": "error",
		"error": map[string]string{"type": errorType(code), "code": reason, "message": message}})
	w.Write(body)
}
