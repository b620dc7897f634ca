package governor

import "errors"

// ErrPending is what a [JobConsent] or [AdmissionConsent] returns when its
// question went to the client as an MCP ≥ 2026-07-28 input request in the
// tool result: nobody has answered yet, so nothing was refused, started or
// admitted, and no refusal event is recorded. The surface returns its
// input-request result; the client retries the call with the answer, and
// the retried call asks again (and is judged) from the start.
var ErrPending = errors.New("governor: the question was sent as an input request; the answer comes with the retried call")
