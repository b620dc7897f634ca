package price

import (
	"regexp"
	"strings"
	"testing"
)

var idCases = []string{
	"", "a", "Z", "0", "-a", ".a", "/a", "[a", "_a", "o", "o1", "o3-mini", "oa", "O1", "xo1",
	"anthropic/claude-opus-4.1", "openai/gpt-5:nitro", "model[1m]",
	"a b", "a\n", "a\x00", "é", "aé", "a\xff",
	strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat("]", 127),
}

func TestHandCheckersMatchPatterns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pattern string
		check   func(string) bool
	}{
		{"validID", `^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`, validID},
		{"oSeries", `^o[0-9]`, oSeries},
	} {
		re := regexp.MustCompile(tc.pattern)
		for _, s := range idCases {
			if got, want := tc.check(s), re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v", tc.name, s, got, want)
			}
		}
	}
}

func FuzzHandCheckers(f *testing.F) {
	for _, s := range idCases {
		f.Add(s)
	}
	id, o := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`), regexp.MustCompile(`^o[0-9]`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validID(s), id.MatchString(s); got != want {
			t.Errorf("validID(%q) = %v, want %v", s, got, want)
		}
		if got, want := oSeries(s), o.MatchString(s); got != want {
			t.Errorf("oSeries(%q) = %v, want %v", s, got, want)
		}
	})
}
