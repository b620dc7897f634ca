package claude

import (
	"fmt"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// categories maps the assistant event's error category (backends.md §2).
var categories = map[string]fault.Code{
	"authentication_failed":  fault.AuthRequired,
	"oauth_org_not_allowed":  fault.AuthRequired,
	"account_on_hold":        fault.AuthRequired,
	"cloud_credential_error": fault.AuthRequired,
	"billing_error":          fault.AuthRequired,
	"rate_limit":             fault.RateLimited,
	"model_not_found":        fault.ModelUnavailable,
	"overloaded":             fault.ProcessError,
	"server_error":           fault.ProcessError,
	"invalid_request":        fault.ProcessError,
	"max_output_tokens":      fault.ProcessError,
}

var messages = map[fault.Code]string{
	fault.AuthRequired:     "Claude Code is not logged in or its credentials were refused. Run `claude` and log in, then retry.",
	fault.RateLimited:      "Claude Code hit a rate limit.",
	fault.ModelUnavailable: "The requested model is not available to Claude Code.",
	fault.ProcessError:     "Claude Code reported an error.",
	fault.SessionInvalid:   "The session cannot be continued: Claude Code does not know it.",
}

// failure types a failed turn: category first, then API status, then the
// errors[] prefix; an unknown failure is PROCESS_ERROR (never INPUT_LIMIT).
func failure(ev event, category string, rate *rateLimitInfo) error {
	code, reason := classify(ev, category)
	if rate != nil && code == fault.ProcessError {
		code, reason = fault.RateLimited, "claude.rate_limit_event"
	}
	e := fault.New(code, reason, messages[code])
	if code == fault.RateLimited || (code == fault.ProcessError && (category == "overloaded" || category == "server_error" || statusIs5xx(ev))) {
		e.Retryable = true
	}
	if rate != nil && rate.ResetsAt != nil {
		e.With("resetsAt", fmt.Sprint(rate.ResetsAt))
	}
	return e
}

func classify(ev event, category string) (fault.Code, string) {
	if c, ok := categories[category]; ok {
		return c, "claude." + category
	}
	if ev.APIErrorStatus != nil {
		switch s := *ev.APIErrorStatus; {
		case s == 401 || s == 403:
			return fault.AuthRequired, "claude.http_auth"
		case s == 404:
			return fault.ModelUnavailable, "claude.http_404"
		case s == 429:
			return fault.RateLimited, "claude.http_429"
		}
	}
	for _, e := range ev.Errors {
		if strings.HasPrefix(e, "No conversation found with session ID") {
			return fault.SessionInvalid, "claude.unknown_session"
		}
	}
	return fault.ProcessError, "claude.failed"
}

func statusIs5xx(ev event) bool {
	return ev.APIErrorStatus != nil && *ev.APIErrorStatus >= 500
}
