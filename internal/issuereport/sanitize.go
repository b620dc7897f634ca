package issuereport

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/coagent8/coagent8/internal/redact"
)

// Patterns compile on first use (sync.OnceValue), not at package init,
// which every coagent8 process start pays, the sandbox helper included
// (issue 8 performance).
var (
	fenceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)(```|~~~).*?(```|~~~|$)") })
	// Other users' homes: a report names nobody's account.
	homeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(/home/|/Users/|[A-Z]:\\Users\\)[^/\\\s"'<>]+`) })
	// Long opaque runs (tokens the redactor may not know yet): a bug report
	// never needs them. Hex commit ids are kept.
	opaqueRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9_\-+=]{24,}`) })
	hexRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32,64}$`) })
	// A Go module version: semver core, then dot or hyphen separated
	// pre-release identifiers that are each all digits, a lowercase word
	// with optional trailing digits, or a 12–40 digit lowercase hex commit
	// (pseudo-versions: v0.0.0-20261202003906-cb32f7be49d5), and an
	// optional +incompatible/+dirty. A mixed-case token does not fit.
	buildVersionRE = sync.OnceValue(func() *regexp.Regexp {
		id := `(?:[0-9]+|[a-z]+[0-9]*|[0-9a-f]{12,40})`
		return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(?:-` + id + `(?:[.-]` + id + `)*)?(?:\+[a-z]+)?$`)
	})
)

type sanitizer struct {
	home string
	red  *redact.Redactor
}

func newSanitizer(home string) *sanitizer {
	return &sanitizer{home: home, red: redact.NewDiagnostic(home)}
}

// clean removes code and diffs, redacts, and scrubs paths and opaque runs.
func (s *sanitizer) clean(text string) string {
	text = fenceRE().ReplaceAllString(text, "[code block removed]")
	text = dropDiffs(text)
	text = s.red.String(text)
	if s.home != "" && len(s.home) > 1 {
		text = strings.ReplaceAll(text, s.home, "~")
	}
	text = homeRE().ReplaceAllString(text, "~")
	return opaqueRE().ReplaceAllStringFunc(text, func(m string) string {
		if hexRE().MatchString(m) || !mixed(m) {
			return m
		}
		return "[REDACTED:opaque]"
	})
}

// buildVersion reports whether v has the shape of coagent8's own build
// version (a Go module or pseudo-version, at most 80 bytes).
func buildVersion(v string) bool {
	return len(v) <= 80 && buildVersionRE().MatchString(v)
}

// mixed reports whether a run has both letters and digits (paths and
// words do not trip the opaque scrub).
func mixed(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsFunc(s, func(r rune) bool {
		return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'
	})
}

// dropDiffs replaces each unified-diff block with one marker line.
func dropDiffs(text string) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	in := false
	for _, l := range lines {
		start := strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "@@ ") ||
			strings.HasPrefix(l, "--- a/") || strings.HasPrefix(l, "+++ b/") || strings.HasPrefix(l, "Index: ")
		body := in && (l != "" && strings.ContainsAny(l[:1], "+- @\\") || strings.HasPrefix(l, "index "))
		switch {
		case start || body:
			if !in {
				out = append(out, "[diff removed]")
			}
			in = true
		default:
			in = false
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
