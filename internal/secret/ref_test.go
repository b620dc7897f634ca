package secret

import (
	"regexp"
	"strings"
	"testing"
)

// envPattern is the regular expression envName implements by hand.
const envPattern = `^[A-Za-z_][A-Za-z0-9_]{0,127}$`

var envCases = []string{
	"", "A", "_", "a", "0", "9A", "_9", "A9", "ANTHROPIC_API_KEY", "A-B", "A.B", "A B",
	"A=", "A\n", "A\x00", "É", "AÉ", "A\xff",
	strings.Repeat("A", 128), strings.Repeat("A", 129), "_" + strings.Repeat("9", 127),
}

func TestEnvNameMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(envPattern)
	for _, s := range envCases {
		if got, want := envName(s), re.MatchString(s); got != want {
			t.Errorf("envName(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzEnvName(f *testing.F) {
	for _, s := range envCases {
		f.Add(s)
	}
	re := regexp.MustCompile(envPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := envName(s), re.MatchString(s); got != want {
			t.Errorf("envName(%q) = %v, want %v", s, got, want)
		}
	})
}
