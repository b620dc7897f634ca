package agy

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
	{"eventID", `^[A-Za-z0-9._:/-]{1,128}$`, eventID},
}

var idCases = []string{
	"", "a", "-", ".", "/a", "msg_01:abc/def-1.2", "a b", "a_b", "a\n", "a\x00", "é", "a\xff",
	strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("/", 128),
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e", "0199A6C4-7B1E-7C3A-9D2F-4E5A6B7C8D9E",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e0",
	"0199a6c47b1e-7c3a-9d2f-4e5a6b7c8d9e-", "g199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9\n", "------------------------------------",
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
