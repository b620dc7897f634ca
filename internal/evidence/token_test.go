package evidence

import (
	"regexp"
	"strings"
	"testing"
)

const tokenPattern = `^[a-z0-9][a-z0-9._:-]{0,63}$`

var tokenCases = []string{
	"", "a", "0", "A", "-a", ".a", "audit", "egress.decision:v1", "a_b", "a b", "aB", "a\n", "a\x00", "é", "a\xff",
	strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat(":", 63),
}

func TestTokenMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(tokenPattern)
	for _, s := range tokenCases {
		if got, want := token(s), re.MatchString(s); got != want {
			t.Errorf("token(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzToken(f *testing.F) {
	for _, s := range tokenCases {
		f.Add(s)
	}
	re := regexp.MustCompile(tokenPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := token(s), re.MatchString(s); got != want {
			t.Errorf("token(%q) = %v, want %v", s, got, want)
		}
	})
}
