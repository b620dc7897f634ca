package doctor

import (
	"encoding/json"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// scrub passes the whole report through the diagnostic redactor by
// round-tripping it through JSON, so no field (a path, an error message, a
// section added later) can escape redaction. The JSON encoding escapes
// nothing the redactor needs to see whole except "<", ">" and "&", which
// credential formats do not contain.
func scrub(r Report, red *redact.Redactor) Report {
	b, err := json.Marshal(r)
	if err != nil {
		return Report{SchemaVersion: 1, Status: "error"}
	}
	var out Report
	if err := json.Unmarshal([]byte(red.String(string(b))), &out); err != nil {
		return Report{SchemaVersion: 1, Status: "error"}
	}
	return out
}

func probeError(err error) *adapter.ProbeError {
	fe := fault.From(err)
	return &adapter.ProbeError{Code: string(fe.Code), Reason: fe.Reason, Message: fe.Message}
}
