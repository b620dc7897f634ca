package gate

// Decision reasons. Each is the Reason of the security event and the code
// in the client's error body; tests assert them.
const (
	ReasonAdmitted            = "admitted"
	ReasonHello               = "route.hello"        // HEAD /api/hello answered locally
	ReasonRoute               = "route.not_admitted" // method/path outside the allowlist
	ReasonPathForm            = "route.path_form"    // encoded, unclean or oversized path
	ReasonUpgrade             = "route.upgrade"      // WebSocket/any Upgrade refused
	ReasonNoCredential        = "credential.missing"
	ReasonAmbiguous           = "credential.ambiguous" // two different credentials
	ReasonRealKey             = "credential.provider_key"
	ReasonUnknownGrant        = "credential.unknown"
	ReasonProvider            = "grant.provider"
	ReasonJob                 = "grant.job"
	ReasonModel               = "grant.model"
	ReasonExpired             = "grant.expired"
	ReasonRevoked             = "grant.revoked"
	ReasonSettled             = "grant.settled"
	ReasonBody                = "request.body"
	ReasonBodyTimeout         = "request.body_timeout"   // the body did not arrive within Options.BodyTimeout
	ReasonFilterBinding       = "egress.filter_binding"  // the privacy filter changed the model or output limit the gate bound
	ReasonHostedTool          = "request.hosted_tool"    // a tool the provider would run itself (web search, web fetch, MCP connector, ...)
	ReasonProviderFetch       = "request.provider_fetch" // a content block the provider would fetch from a URL itself (an image or document by URL)
	ReasonProviderState       = "request.provider_state" // content the provider adds from its own storage (stored response, conversation, item reference, uploaded file)
	ReasonQuery               = "request.query"          // a query parameter outside the route's, repeated, or not its form; a bare "?"
	ReasonHeaderSize          = "request.header_size"    // header block above maxHeaderBytes
	ReasonHeaderForm          = "request.header_form"    // allowlisted header repeated, empty, folded or not printable ASCII
	ReasonDuplicateCredential = "credential.duplicate"   // x-api-key or Authorization repeated, or Proxy-Authorization sent
	ReasonBudgetRequests      = "budget.requests"        // the request budget is used up
	ReasonBudgetUnmetered     = "budget.unmetered"       // the grant's allowance of unmetered requests (token counts, model lists) in this gate is used up
	ReasonBudgetTokens        = "budget.tokens"          // used tokens leave no room for this request's reservation
	ReasonBudgetSpend         = "budget.spend"           // used spend leaves no room for this request's reservation
	ReasonBudgetReserved      = "budget.reserved"        // room only once requests in flight settle: retry later
	ReasonRequestTokens       = "budget.request_tokens"  // this request alone reserves more tokens than the whole grant holds
	ReasonRequestSpend        = "budget.request_spend"   // this request alone reserves more spend than the whole grant holds
	ReasonSecret              = "secret.binding_failed"
	ReasonUndeclared          = "secret.undeclared" // reference not declared for this provider (gate.credentials)
	ReasonUpstream            = "upstream.error"
	ReasonEcho                = "upstream.credential_echo" // a response carried the real credential or a credential format: withheld
	ReasonUnavailable         = "gate.unavailable"         // ledger failure: fail closed
)

// status maps a denial reason to the HTTP status the client sees. Only a
// refusal that can pass later unchanged is 429 or 5xx: the CLIs' SDKs retry
// those with backoff for minutes (issue 19 item 14), so a budget that can
// never pay for the request — used up, or smaller than the request's
// reservation — is 402: the pinned Claude Code prints its message after
// one attempt (400 it re-sends up to three times, 403 it prefixes with
// "Failed to authenticate").
func status(reason string) int {
	switch reason {
	case ReasonBudgetReserved:
		return 429
	case ReasonRequestTokens, ReasonRequestSpend, ReasonBudgetRequests, ReasonBudgetTokens, ReasonBudgetSpend, ReasonBudgetUnmetered:
		return 402 // Anthropic's billing_error: printed once, never retried
	case ReasonNoCredential, ReasonAmbiguous, ReasonRealKey, ReasonUnknownGrant, ReasonDuplicateCredential:
		return 401
	case ReasonHeaderSize:
		return 431
	case ReasonHeaderForm, ReasonQuery:
		return 400
	case ReasonRoute:
		return 404
	case ReasonBody:
		return 400
	case ReasonBodyTimeout:
		return 408
	case ReasonSecret, ReasonUpstream, ReasonEcho:
		return 502
	case ReasonUnavailable:
		return 503
	}
	return 403
}

// errorType is the Anthropic error type of an HTTP status (the CLIs print
// error.message under it; OpenAI clients read error.code and message).
func errorType(code int) string {
	switch {
	case code == 400 || code == 431:
		return "invalid_request_error"
	case code == 401:
		return "authentication_error"
	case code == 402:
		return "billing_error"
	case code == 404:
		return "not_found_error"
	case code == 429:
		return "rate_limit_error"
	case code >= 500:
		return "api_error"
	}
	return "permission_error"
}
