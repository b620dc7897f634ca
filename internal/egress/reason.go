package egress

// Decision reasons: the Reason of the fault, the event and the ledger
// record. Tests assert them.
const (
	ReasonRaw             = "egress.raw"      // allowed: below portal_threshold
	ReasonFiltered        = "egress.filtered" // allowed: filtered and verified
	ReasonCategory        = "egress.category"
	ReasonForbidden       = "egress.forbidden"
	ReasonHeader          = "egress.header_content" // labelled content in a forwarded header (headers are never filtered)
	ReasonLineage         = "egress.lineage_missing"
	ReasonPurpose         = "egress.purpose"
	ReasonUnknownFact     = "egress.unknown_recipient_fact" // the policy depends on a recipient fact the configuration does not state
	ReasonRecipientFact   = "egress.recipient_fact"         // a stated recipient fact violates the policy's requirement
	ReasonTargetKind      = "egress.target_unsupported"
	ReasonTargetMismatch  = "egress.target_mismatch"
	ReasonWireMismatch    = "egress.wire_mismatch"
	ReasonPurposeMismatch = "egress.purpose_mismatch"
	ReasonPolicyChanged   = "egress.policy_changed"
	ReasonExpired         = "egress.expired"
	ReasonFilterFailed    = "egress.filter_failed"
	ReasonFilterExpired   = "egress.filter_expired"
	ReasonSpent           = "egress.decision_spent"
	ReasonUsesExhausted   = "egress.budget_uses"
	ReasonBytesExhausted  = "egress.budget_bytes"
	ReasonConfigConflict  = "egress.config_conflict"
	ReasonUnavailable     = "egress.unavailable"
)
