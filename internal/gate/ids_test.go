package gate

import (
	"regexp"
	"strings"
	"testing"
)

// idCases exercise the edges of the id alphabets: length bounds, first
// byte, every extra byte, control and non-ASCII bytes, invalid UTF-8.
var idCases = []string{
	"", "a", "Z", "0", "-a", ".a", ":a", "/a", "[a", "]a", "_a",
	"claude-opus-4-1", "gpt-5.1-codex", "anthropic/claude:beta", "model[1m]",
	"a_b", "a b", "a\n", "a\x00", "a\t", "é", "aé", "a\xff", "\xffa",
	"job:1.2-3", "job/1", "job[1]",
	strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129),
	"a" + strings.Repeat("-", 127), "a" + strings.Repeat("-", 128),
}

func TestIDCheckersMatchPatterns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pattern string
		check   func(string) bool
	}{
		{"model", `^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`, validModelID},
		{"job", `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`, validJobID},
	} {
		re := regexp.MustCompile(tc.pattern)
		for _, s := range idCases {
			if got, want := tc.check(s), re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v", tc.name, s, got, want)
			}
		}
	}
}

func FuzzIDCheckers(f *testing.F) {
	for _, s := range idCases {
		f.Add(s)
	}
	model := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`)
	job := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validModelID(s), model.MatchString(s); got != want {
			t.Errorf("validModelID(%q) = %v, want %v", s, got, want)
		}
		if got, want := validJobID(s), job.MatchString(s); got != want {
			t.Errorf("validJobID(%q) = %v, want %v", s, got, want)
		}
	})
}
