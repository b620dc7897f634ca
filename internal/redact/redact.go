package redact

import (
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Profile selects what is redacted.
type Profile int

const (
	// Answer redacts only recognised credential formats:
	// model answers stay byte-identical otherwise.
	Answer Profile = iota + 1
	// Diagnostic also redacts keyword assignments, HTTP Basic and URL
	// credentials and the home directory: for stderr, errors, logs,
	// doctor output and issue reports.
	Diagnostic
)

// String returns "answer" or "diagnostic".
func (p Profile) String() string {
	switch p {
	case Answer:
		return "answer"
	case Diagnostic:
		return "diagnostic"
	}
	panic("redact: unknown Profile")
}

// Redactor applies one profile. It is immutable and safe for concurrent use;
// the writers it returns are not.
type Redactor struct {
	profile Profile
	home    string
	rs      *ruleset
}

// answerRules is compiled once, on first use (not at start-up: every
// coagent8 process pays its initialisers): the answer profile has no
// parameters.
var answerRules = sync.OnceValue(func() *ruleset { return newRuleset(false, "", true) })

// trafficRules are the answer rules without the gate's phantom.
var trafficRules = sync.OnceValue(func() *ruleset { return newRuleset(false, "", false) })

// NewAnswer returns the answer-profile redactor.
func NewAnswer() *Redactor { return &Redactor{profile: Answer, rs: answerRules()} }

// NewTraffic returns the answer-profile redactor without the provider
// gate's own phantom format ([KindPhantom]): the credential check of
// provider traffic (the gate's request and response checks, the egress
// classifier and privacy filter). A phantom in that traffic is the
// delegated agent's own stand-in (an agent that prints its environment
// sends it in the next request, and the model may repeat it): the
// provider cannot reach the gate to use it, so it must neither refuse
// the request, contain the job nor withhold the answer. Everything that
// leaves coagent8 for a person or the calling agent uses [NewAnswer] or
// [NewDiagnostic], which redact it.
func NewTraffic() *Redactor { return &Redactor{profile: Answer, rs: trafficRules()} }

// NewDiagnostic returns the diagnostic-profile redactor. home (may be empty)
// is rewritten to "~" where it appears as a whole path prefix; an empty or
// root home disables that rule.
func NewDiagnostic(home string) *Redactor {
	return &Redactor{profile: Diagnostic, home: home, rs: newRuleset(true, home, true)}
}

// Profile reports the redactor's profile.
func (r *Redactor) Profile() Profile { return r.profile }

// String returns s with every credential replaced by its marker. It returns
// s itself when nothing matched (no allocation).
func (r *Redactor) String(s string) string {
	out, changed := r.redact(unsafe.Slice(unsafe.StringData(s), len(s)))
	if !changed {
		return s
	}
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// Bytes is [Redactor.String] for a byte slice. When nothing matched it
// returns p itself; otherwise a new slice. p is never modified.
func (r *Redactor) Bytes(p []byte) []byte {
	out, _ := r.redact(p)
	return out
}

// Changes reports whether [Redactor.Bytes] would return bytes other than
// p: a credential format is in p (a match whose marker spells the very
// bytes it replaces does not count). It scans exactly as Bytes does, but
// builds no copy and reuses its scanner, so a check of clean input
// allocates nothing (the provider gate's response check runs it on every
// chunk and streamed delta; issue 18 performance).
func (r *Redactor) Changes(p []byte) bool {
	from := r.rs.scanFrom(p)
	if from == len(p) {
		return false
	}
	c := checks.Get().(*check)
	c.sc = newScanner(r.rs)
	ms, _ := c.sc.scan(p, from, true, c.arr[:0])
	changed := len(ms) > 0
	if changed {
		out := apply(make([]byte, 0, len(p)), p, 0, len(p), ms)
		changed = len(out) != len(p) || string(out) != string(p)
	}
	*c = check{} // drop the references to p and the ruleset
	checks.Put(c)
	return changed
}

// check is [Redactor.Changes]'s pooled state: the detectors take a
// pointer to the scanner's cursor and the match list, so fresh ones
// escape to the heap on every call.
type check struct {
	sc  scanner
	arr [8]match
}

var checks = sync.Pool{New: func() any { return new(check) }}

func (r *Redactor) redact(b []byte) ([]byte, bool) {
	return r.redactFrom(b, r.rs.scanFrom(b))
}

// redactFrom scans b from index from (b[:from] is context only; see
// [ruleset.scanFrom]).
func (r *Redactor) redactFrom(b []byte, from int) ([]byte, bool) {
	if from == len(b) {
		return b, false
	}
	sc := newScanner(r.rs)
	var arr [8]match
	ms, _ := sc.scan(b, from, true, arr[:0])
	if len(ms) == 0 {
		return b, false
	}
	return apply(make([]byte, 0, len(b)), b, 0, len(b), ms), true
}

// apply appends b[from:to] to dst with each match replaced.
func apply(dst, b []byte, from, to int, ms []match) []byte {
	last := from
	for _, m := range ms {
		dst = append(dst, b[last:m.start]...)
		if m.kind != 0 {
			dst = append(dst, markers[m.kind]...)
		}
		last = m.end
	}
	return append(dst, b[last:to]...)
}

// Bound redacts s and then cuts it to at most limit bytes at a UTF-8
// boundary; truncated reports whether it cut. Truncation only ever sees
// redacted text. A negative limit counts as 0.
func (r *Redactor) Bound(s string, limit int) (out string, truncated bool) {
	s = r.String(s)
	if len(s) <= limit {
		return s, false
	}
	cut := max(limit, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
