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
	ReasonQuery               = "request.query"        // a query parameter outside the route's, repeated, or not a short token
	ReasonHeaderSize          = "request.header_size"  // header block above maxHeaderBytes
	ReasonHeaderForm          = "request.header_form"  // allowlisted header repeated, empty, folded or not printable ASCII
	ReasonDuplicateCredential = "credential.duplicate" // x-api-key or Authorization repeated, or Proxy-Authorization sent
	ReasonBudgetRequests      = "budget.requests"
	ReasonBudgetTokens        = "budget.tokens"
	ReasonBudgetSpend         = "budget.spend"
	ReasonSecret              = "secret.binding_failed"
	ReasonUndeclared          = "secret.undeclared" // reference not declared for this provider (gate.credentials)
	ReasonUpstream            = "upstream.error"
	ReasonEcho                = "upstream.credential_echo" // a response carried the real credential or a credential format: withheld
	ReasonUnavailable         = "gate.unavailable"         // ledger failure: fail closed
)

// status maps a denial reason to the HTTP status the client sees: budget
// exhaustion is 429, an unusable credential 401, anything else 403.
func status(reason string) int {
	switch reason {
	case ReasonBudgetRequests, ReasonBudgetTokens, ReasonBudgetSpend:
		return 429
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
	case ReasonSecret, ReasonUpstream, ReasonEcho:
		return 502
	case ReasonUnavailable:
		return 503
	}
	return 403
}
