package codex

import (
	"regexp"
	"strings"
	"testing"
)

// idPatterns are the regular expressions the hand-written checks implement.
var idPatterns = []struct {
	name    string
	pattern string
	check   func(string) bool
}{
	{"envKey", `^[A-Za-z_][A-Za-z0-9_]{0,127}$`, envKey},
	{"bareKey", `^[A-Za-z0-9_-]+$`, bareKey},
}

var idCases = []string{
	"", "A", "_", "a", "0", "-", "9A", "_9", "OPENAI_API_KEY", "A-B", "A.B", "A B", "A*", "A=",
	"my-server", "my_server", "my.server", "'x'", "\"a.b\"", "A\n", "A\x00", "É", "AÉ", "A\xff",
	strings.Repeat("A", 128), strings.Repeat("A", 129), strings.Repeat("-", 300),
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e", "0199A6C4-7B1E-7C3A-9D2F-4E5A6B7C8D9E",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e0",
	"0199a6c47b1e-7c3a-9d2f-4e5a6b7c8d9e-", "0199a6c4_7b1e_7c3a_9d2f_4e5a6b7c8d9e",
	"g199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9\n",
}

func TestIDChecksMatchPatterns(t *testing.T) {
	for _, p := range idPatterns {
		re := regexp.MustCompile(p.pattern)
		for _, s := range idCases {
			if got, want := p.check(s), re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v", p.name, s, got, want)
			}
		}
	}
}

func FuzzIDChecks(f *testing.F) {
	for _, s := range idCases {
		f.Add(s)
	}
	var res []*regexp.Regexp
	for _, p := range idPatterns {
		res = append(res, regexp.MustCompile(p.pattern))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, p := range idPatterns {
			if got, want := p.check(s), res[i].MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v", p.name, s, got, want)
			}
		}
	})
}
