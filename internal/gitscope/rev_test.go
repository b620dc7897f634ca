package gitscope

import (
	"regexp"
	"strings"
	"testing"
)

var revPatterns = []struct {
	name    string
	pattern string
	check   func(string) bool
}{
	{"isHexRev", `^[0-9a-fA-F]{7,40}$`, isHexRev},
	{"isHeadRel", `^HEAD([~^][0-9]*)+$`, isHeadRel},
}

var revCases = []string{
	"", "abc", "abcdef", "abcdef0", "ABCDEF0", "abcdefg", strings.Repeat("a", 40), strings.Repeat("a", 41),
	"HEAD", "HEAD~", "HEAD^", "HEAD~2", "HEAD^2~1", "HEAD~~^", "HEAD2", "HEAD~x", "head~1", "xHEAD~1",
	"HEAD~1\n", "HEAD~1 ", "HEAD~10000000000000000000", "abcdef0\n", "abcdeé0",
}

func TestRevChecksMatchPatterns(t *testing.T) {
	for _, p := range revPatterns {
		re := regexp.MustCompile(p.pattern)
		for _, s := range revCases {
			if got, want := p.check(s), re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v", p.name, s, got, want)
			}
		}
	}
}

func FuzzRevChecks(f *testing.F) {
	for _, s := range revCases {
		f.Add(s)
	}
	var res []*regexp.Regexp
	for _, p := range revPatterns {
		res = append(res, regexp.MustCompile(p.pattern))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, p := range revPatterns {
			if got, want := p.check(s), res[i].MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v", p.name, s, got, want)
			}
		}
	})
}
