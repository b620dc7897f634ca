package review

import (
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// ErrEmptyAnswer is returned by [Gate] for an answer with no text: an empty
// answer is never reported as a clean review (AUD-P2-2).
var ErrEmptyAnswer = fault.New(fault.ProtocolError, "review.empty_answer",
	"The backend returned an empty answer; no review was performed.")

// Gate applies the State Envelope rules of contract.md §3 to a backend's
// final answer. truncated reports whether the answer was cut anywhere on its
// way here (record or output limits). A JSON answer that meets [Schema] is
// first rendered to envelope text ([Render]) so one set of rules applies.
//
// The Result is READY only if the envelope is complete and well formed, the
// model said READY, coverage is COMPLETE, nothing was truncated and no
// "[P1]"/"[P2]" appears anywhere. Otherwise it is BLOCKED with the first
// applicable Reason* constant and Text rewritten. An empty answer returns
// [ErrEmptyAnswer] and a BLOCKED Result carrying its message.
func Gate(answer string, truncated bool) (Result, error) {
	if strings.TrimSpace(answer) == "" {
		return FromError(ErrEmptyAnswer), ErrEmptyAnswer
	}
	text := answer
	env, isJSON := decodeJSON(answer)
	if isJSON {
		text = Render(env)
	}
	p := parse(text)
	p.blocker = p.blocker || blockerRE().MatchString(answer)
	p.truncated = truncated
	if !isJSON {
		env = p.envelope()
	}
	res := Result{Verdict: Ready, Text: text, Envelope: env, Truncated: truncated}
	if reason := p.blockReason(); reason != "" {
		res.Verdict, res.Reason, res.Text = Blocked, reason, p.rewrite()
	}
	return res, nil
}

// FromError is the Result of a review whose execution failed: BLOCKED with
// the error's public message as the reason (contract.md §3).
func FromError(err error) Result {
	return Result{Verdict: Blocked, Reason: fault.From(err).Message}
}

// blockReason returns the first applicable reason, or "" for READY. The
// order is the contract's.
func (p *parsed) blockReason() string {
	switch {
	case p.blocker:
		return ReasonBlocker
	case p.partial():
		return ReasonPartial
	case p.truncated:
		return ReasonTruncated
	case !p.complete():
		return ReasonIncomplete
	case !strings.EqualFold(p.first("VERDICT"), string(Ready)):
		return ReasonNotReady
	}
	return ""
}

func (p *parsed) partial() bool {
	for _, h := range p.headers["COVERAGE"] {
		if strings.EqualFold(h.value, CoveragePartial) {
			return true
		}
	}
	return false
}

// complete reports whether every required header occurs exactly once with
// a valid value and END_REVIEW is the last non-empty line.
func (p *parsed) complete() bool {
	for _, name := range []string{"REVIEW", "SNAPSHOT", "CHECKS"} {
		if !p.once(name, nil) {
			return false
		}
	}
	return p.once("COVERAGE", []string{CoverageComplete, CoveragePartial}) &&
		p.once("VERDICT", []string{string(Ready), string(Blocked)}) &&
		len(p.ends) == 1 && p.ends[0].value == "" && p.ends[0].line == p.lastLine
}

// once reports whether header name occurs exactly once with a non-empty
// value that, if allowed is non-nil, is one of allowed (case-insensitive,
// whole value: "READY_BOGUS" is not READY).
func (p *parsed) once(name string, allowed []string) bool {
	h := p.headers[name]
	if len(h) != 1 || h[0].value == "" {
		return false
	}
	if allowed == nil {
		return true
	}
	for _, a := range allowed {
		if strings.EqualFold(h[0].value, a) {
			return true
		}
	}
	return false
}

// rewrite replaces the first VERDICT line with "VERDICT: BLOCKED" and drops
// the others, or appends one when there is none.
func (p *parsed) rewrite() string {
	verdicts := map[int]bool{}
	for _, h := range p.headers["VERDICT"] {
		verdicts[h.line] = true
	}
	if len(verdicts) == 0 {
		return strings.Join(p.lines, "\n") + "\n\nVERDICT: BLOCKED"
	}
	out := make([]string, 0, len(p.lines))
	done := false
	for i, line := range p.lines {
		if !verdicts[i] {
			out = append(out, line)
		} else if !done {
			out, done = append(out, "VERDICT: BLOCKED"), true
		}
	}
	return strings.Join(out, "\n")
}
