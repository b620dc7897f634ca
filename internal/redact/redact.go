// Package redact removes credentials from text before it leaves coagent8.
//
// PRELIMINARY: this file fixes the API other packages use (issue 2's seam).
// The full detector set, the streaming writer and the fuzz tests arrive with
// the redaction issue and replace the bodies below.
package redact

import (
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Profile selects what is redacted.
type Profile int

const (
	// Answer redacts only recognised credential formats: model
	// answers stay byte-identical otherwise.
	Answer Profile = iota + 1
	// Diagnostic also redacts keyword assignments, URL passwords and the
	// home directory: for stderr, errors, logs, doctor, reports.
	Diagnostic
)

// Redactor applies one profile. It is safe for concurrent use.
type Redactor struct {
	profile Profile
	home    string
}

// NewAnswer returns the answer-profile redactor.
func NewAnswer() *Redactor { return &Redactor{profile: Answer} }

// NewDiagnostic returns the diagnostic-profile redactor; home (may be empty)
// is rewritten to "~" at a path boundary.
func NewDiagnostic(home string) *Redactor { return &Redactor{profile: Diagnostic, home: home} }

// Profile reports the redactor's profile.
func (r *Redactor) Profile() Profile { return r.profile }

var prelim = regexp.MustCompile(`sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}`)

// String returns s with every credential replaced by a marker.
func (r *Redactor) String(s string) string {
	s = prelim.ReplaceAllString(s, "[REDACTED:token]")
	if r.profile == Diagnostic && r.home != "" && r.home != "/" {
		s = strings.ReplaceAll(s, r.home+"/", "~/")
	}
	return s
}

// Bound redacts s and then cuts it to at most limit bytes at a UTF-8
// boundary; truncated reports whether it cut. Truncation only ever sees
// redacted text.
func (r *Redactor) Bound(s string, limit int) (out string, truncated bool) {
	s = r.String(s)
	if len(s) <= limit {
		return s, false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// Writer returns a streaming redactor writing to w; Close flushes the tail.
func (r *Redactor) Writer(w io.Writer) io.WriteCloser {
	return &bufWriter{r: r, w: w}
}

type bufWriter struct {
	r   *Redactor
	w   io.Writer
	buf []byte
}

func (b *bufWriter) Write(p []byte) (int, error) { b.buf = append(b.buf, p...); return len(p), nil }

func (b *bufWriter) Close() error {
	_, err := io.WriteString(b.w, b.r.String(string(b.buf)))
	return err
}
