package agy

import (
	"errors"
	"regexp"
	"sync"

	"github.com/coagent8/coagent8/internal/fault"
)

// class is one text-classification rule; rules are tried in order and the
// first match wins (backends.md §3: rate → session → auth → model →
// sandbox → process). Patterns are anchored on whole words or status
// fields so "line 429" or "disk quota check" do not match (AUD-P2-1).
type class struct {
	re        *regexp.Regexp
	code      fault.Code
	reason    string
	message   string
	retryable bool
}

// classes compile on first use, not at package init, which every coagent8
// process start pays (the sandbox helper included; issue 8 performance).
var classes = sync.OnceValue(func() []class {
	return []class{
		{regexp.MustCompile(`\bRESOURCE_EXHAUSTED\b|(?i)\b(quota|rate limit)\s+(exceeded|exhausted|reached)\b|(?i)\btoo many requests\b|(?i)\b(status|code|http)\s*[=:]?\s*429\b`),
			fault.RateLimited, "agy.rate_limited", "agy reported a rate or quota limit.", true},
		{regexp.MustCompile(`(?i)\bconversation\b[^\n]*\bnot found\b|(?i)\b(invalid|unknown) (conversation|session)\b`),
			fault.SessionInvalid, "agy.session", "agy could not continue the conversation.", false},
		{regexp.MustCompile(`(?i)\bineligibletiererror\b|\bUNAUTHENTICATED\b|\bPERMISSION_DENIED\b|(?i)\b(status|code|http)\s*[=:]?\s*(401|403)\b|(?i)\bcode\s*=\s*(7|16)\b|(?i)\b(not logged in|login required|please (log|sign) ?in|authentication (failed|required)|invalid credentials)\b`),
			fault.AuthRequired, "agy.auth", "agy is not signed in or not allowed to use this model; sign in with agy.", false},
		{regexp.MustCompile(`(?i)\bmodel\b[^\n]*\bnot found\b|\bNOT_FOUND\b|(?i)\b(status|code|http)\s*[=:]?\s*404\b|(?i)\bcode\s*=\s*5\b`),
			fault.ModelUnavailable, "agy.model", "The requested model is not available to agy.", false},
		{regexp.MustCompile(`(?i)auto-denied|(?m)^jetski:`),
			fault.SandboxUnavailable, "agy.sandbox_denied", "Tool execution denied by sandbox policy.", false},
		{regexp.MustCompile(`\bUNAVAILABLE\b|(?i)\bcode\s*=\s*14\b|(?i)\b(status|code|http)\s*[=:]?\s*50[0-4]\b`),
			fault.ProcessError, "agy.unavailable", "agy's service is temporarily unavailable.", true},
	}
})

// classify maps agy's error text to a typed error. The text is kept only
// as the internal cause (it may quote workspace content or credentials).
func classify(text string) error {
	cause := errors.New(text)
	for _, c := range classes() {
		if c.re.MatchString(text) {
			e := fault.Wrap(c.code, c.reason, c.message, cause)
			e.Retryable = c.retryable
			return e
		}
	}
	return fault.Wrap(fault.ProcessError, "agy.error", "agy reported an error.", cause)
}
