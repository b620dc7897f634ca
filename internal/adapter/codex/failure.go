package codex

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// turnFailure types a failed turn from its TurnError (notes/backends.md
// §1.1 "Errors"): codexErrorInfo first, then the upstream HTTP status it
// carries; an unknown or absent category is PROCESS_ERROR. resetsAt, when
// the CLI pushed a rate-limit window, is kept on RATE_LIMITED errors.
func turnFailure(e *turnError, resetsAt int64, home string) *fault.Error {
	if e == nil {
		return fault.New(fault.ProcessError, "codex.turn_failed", "Codex reported a failed turn without details.")
	}
	kind, status := errorInfo(e.CodexErrorInfo)
	msg := publicMessage(e.Message, home)
	f := byKind(kind, msg)
	if f == nil {
		f = byStatus(status, msg)
	}
	if f == nil {
		f = fault.New(fault.ProcessError, "codex.turn_failed", "Codex turn failed: "+msg)
	}
	if kind != "" {
		f = f.With("codexErrorInfo", clip(kind, 64))
	}
	if f.Code == fault.RateLimited && resetsAt > 0 {
		f = f.With("resetsAt", time.Unix(resetsAt, 0).UTC().Format(time.RFC3339))
	}
	return f
}

// errorInfo decodes CodexErrorInfo: a string, or a one-key object whose
// value may hold httpStatusCode.
func errorInfo(raw json.RawMessage) (kind string, status int) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0
	}
	if json.Unmarshal(raw, &kind) == nil {
		return kind, 0
	}
	var obj map[string]struct {
		HTTPStatusCode *int `json:"httpStatusCode"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return "", 0
	}
	for k, v := range obj {
		kind = k
		if v.HTTPStatusCode != nil {
			status = *v.HTTPStatusCode
		}
	}
	return kind, status
}

func byKind(kind, msg string) *fault.Error {
	switch kind {
	case "usageLimitExceeded", "rateLimitExceeded", "sessionBudgetExceeded":
		return fault.New(fault.RateLimited, "codex."+kind, "Codex is rate limited: "+msg).WithRetry()
	case "unauthorized":
		return fault.New(fault.AuthRequired, "codex.unauthorized", "Codex is not authenticated: "+msg)
	case "modelNotFound":
		return fault.New(fault.ModelUnavailable, "codex.model_not_found", "The model is not available to Codex: "+msg)
	case "sandboxError":
		return fault.New(fault.SandboxUnavailable, "codex.sandbox_error", "Codex's sandbox failed: "+msg)
	case "serverOverloaded", "internalServerError":
		return fault.New(fault.ProcessError, "codex."+kind, "The provider failed: "+msg).WithRetry()
	case "contextWindowExceeded":
		return fault.New(fault.ProcessError, "codex.context_window", "The conversation exceeds the model's context window: "+msg)
	}
	return nil
}

func byStatus(status int, msg string) *fault.Error {
	switch {
	case status == 401 || status == 403:
		return fault.New(fault.AuthRequired, "codex.http_"+strconv.Itoa(status), "Codex is not authenticated: "+msg)
	case status == 404:
		return fault.New(fault.ModelUnavailable, "codex.http_404", "The model is not available to Codex: "+msg)
	case status == 429:
		return fault.New(fault.RateLimited, "codex.http_429", "Codex is rate limited: "+msg).WithRetry()
	case status >= 500:
		return fault.New(fault.ProcessError, "codex.http_"+strconv.Itoa(status), "The provider failed: "+msg).WithRetry()
	}
	return nil
}

// publicMessage redacts (diagnostic profile: credentials, home path) and
// bounds the CLI's error text before it may reach a client.
func publicMessage(s, home string) string {
	out, _ := redact.NewDiagnostic(home).Bound(s, 300)
	if out == "" {
		return "no message"
	}
	return out
}
