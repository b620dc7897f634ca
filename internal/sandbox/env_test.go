package sandbox

import (
	"regexp"
	"strings"
	"testing"
)

const envPattern = `^[A-Za-z_][A-Za-z0-9_]*$`

var envCases = []string{
	"", "A", "_", "a", "0", "9A", "_9", "PATH", "A-B", "A.B", "A B", "A=", "A\n", "A\x00", "É", "AÉ", "A\xff",
	strings.Repeat("A", 1000),
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
