package agy

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// Patterns compile on first use, not at package init, which every
// coagent8 process start pays (the sandbox helper included; issue 8
// performance).
var (
	deniedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^jetski:.*auto-denied`) })
	jetskiRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^jetski:`) })

	printTimeoutRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?im)^.*\bprint[- ]timeout\b.*\b(reached|exceeded|expired|elapsed)\b`)
	})
)

// verified says what was (not) checked: agy reports no effective policy.
const verified = "agy: --sandbox passed; agy reports no effective policy, nothing verified; " + Limitation

// errSandboxDenied is the contract's sandbox-denial error (backends.md §3).
func errSandboxDenied() error {
	return fault.New(fault.SandboxUnavailable, "agy.sandbox_denied", "Tool execution denied by sandbox policy.")
}

// finish decides the turn after agy exited by itself. agy exits 0 on
// failure too, so the exit code alone never means success.
func (s *stream) finish(code int, stderr string) (adapter.Result, error) {
	if jetskiRE().MatchString(stderr) {
		s.warnOnce("jetski", "agy printed a tool-runtime (jetski) notice")
	}
	if err := s.failure(stderr); err != nil {
		return adapter.Result{}, err
	}
	if code != 0 {
		return adapter.Result{}, fault.New(fault.ProcessError, "agy.exit", fmt.Sprintf("agy exited with status %d.", code))
	}
	text := s.final.response
	if text == "" {
		text = s.joined()
	}
	if strings.TrimSpace(text) == "" {
		return adapter.Result{}, protocol("agy.empty_answer", "agy returned no answer text.")
	}
	return adapter.Result{Text: text, SessionID: s.session, Model: s.model, ToolCount: s.tools,
		Usage: s.usage, Warnings: s.warnings, Verified: verified}, nil
}

// failure returns the turn's error, if any, in order: sandbox denial,
// print timeout (incomplete), error event, missing or failed result,
// missing or foreign session.
func (s *stream) failure(stderr string) error {
	switch {
	case s.denial || deniedRE().MatchString(stderr) || (s.final != nil && s.final.denied > 0):
		return errSandboxDenied()
	case printTimeoutRE().MatchString(stderr):
		return fault.New(fault.Timeout, "agy.print_timeout", "agy's print timeout ended the turn early; the answer is incomplete.")
	case s.errored:
		return classify(s.errText)
	case s.final == nil:
		return protocol("agy.no_result", "agy ended without a result event.")
	case s.final.status == "ERROR":
		return classify(s.final.errText)
	case s.final.status != "SUCCESS":
		return fault.New(fault.Timeout, "agy.incomplete", "agy ended the turn before completing it (status "+bound(s.final.status, 32)+").")
	case s.session == "":
		return protocol("agy.no_session", "agy reported no conversation id.")
	case s.inv.resume != "" && !strings.EqualFold(s.inv.resume, s.session):
		return fault.New(fault.SessionInvalid, "agy.session_switched", "agy continued a different conversation than the one requested.")
	}
	return nil
}

func (s *stream) joined() string {
	var b strings.Builder
	for _, k := range s.order {
		b.WriteString(s.msgs[k].String())
	}
	return b.String()
}
