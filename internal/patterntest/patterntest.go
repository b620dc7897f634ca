// Package patterntest checks hand-written string validators against the
// regular expressions they replace. Several packages validate ids by hand
// instead of compiling a regexp in a package variable (every regexp there
// costs each process start, the sandbox helper included: issue 8
// performance); their tests prove the two agree, on a table of cases and
// under the fuzzer.
package patterntest

import (
	"regexp"
	"testing"
)

// Check is one hand-written validator and the pattern it implements.
type Check struct {
	Name    string
	Pattern string
	Func    func(string) bool
}

// Match fails t for every case on which a check and its pattern disagree.
func Match(t testing.TB, cases []string, checks ...Check) {
	t.Helper()
	for _, c := range checks {
		re := regexp.MustCompile(c.Pattern)
		for _, s := range cases {
			if got, want := c.Func(s), re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v (pattern %s)", c.Name, s, got, want, c.Pattern)
			}
		}
	}
}

// Fuzz seeds f with cases and checks every fuzzed input against every
// check's pattern.
func Fuzz(f *testing.F, cases []string, checks ...Check) {
	for _, s := range cases {
		f.Add(s)
	}
	res := make([]*regexp.Regexp, len(checks))
	for i, c := range checks {
		res[i] = regexp.MustCompile(c.Pattern)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, c := range checks {
			if got, want := c.Func(s), res[i].MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, want %v (pattern %s)", c.Name, s, got, want, c.Pattern)
			}
		}
	})
}
