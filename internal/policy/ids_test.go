package policy

import (
	"regexp"
	"strings"
	"testing"
)

// idPattern is the regular expression ValidID implements by hand.
const idPattern = `^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`

var idCases = []string{
	"", "a", "Z", "0", "-a", "--yolo", ".a", ":a", "/a", "[a", "]a", "_a",
	"claude-opus-4-1", "gpt-5.1-codex", "anthropic/claude:beta", "model[1m]",
	"a_b", "a b", "a;b", "a$b", "a\n", "a\x00", "é", "aé", "a\xff",
	strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat("-", 127),
}

func TestValidIDMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(idPattern)
	for _, s := range idCases {
		if got, want := ValidID(s), re.MatchString(s); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidID(f *testing.F) {
	for _, s := range idCases {
		f.Add(s)
	}
	re := regexp.MustCompile(idPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidID(s), re.MatchString(s); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", s, got, want)
		}
	})
}
