package review

import (
	"fmt"
	"strings"
)

// Render writes e as State Envelope text (contract.md §3). Multi-line
// values are indented on their continuation lines, so text inside a field
// can never be read back as a header.
func Render(e Envelope) string {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("REVIEW: %s", flat(e.Review))
	line("SNAPSHOT: %s", flat(e.Snapshot))
	line("COVERAGE: %s", flat(e.Coverage))
	line("VERDICT: %s", flat(string(e.Verdict)))
	if e.Summary != "" {
		line("SUMMARY: %s", flat(e.Summary))
	}
	for _, f := range e.Findings {
		line("")
		line("[%s] %s:%s %s", f.Severity, flat(f.File), lineRange(f), flat(f.Title))
		line("Problem: %s", indent(f.Problem))
		line("Evidence: %s", indent(f.Evidence))
		line("Fix: %s", indent(f.Fix))
	}
	line("")
	line("CHECKS: typecheck=%s; tests=%s", flat(e.Checks.Typecheck), flat(e.Checks.Tests))
	b.WriteString("END_REVIEW")
	return b.String()
}

func lineRange(f Finding) string {
	switch {
	case f.Line == 0:
		return "0"
	case f.LineEnd > f.Line:
		return fmt.Sprintf("%d-%d", f.Line, f.LineEnd)
	}
	return fmt.Sprint(f.Line)
}

func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
