package session

import (
	"regexp"
	"strings"
	"testing"
)

const handlePattern = `^syn_sess_[A-Za-z0-9_-]{6,80}$`

var handleCases = []string{
	"", "syn_sess_", "syn_sess_abcde", "syn_sess_abcdef", "syn_sess_ABC-_9", "syn_sess_abc.def",
	"SYN_SESS_abcdef", "syn_sess abcdef", "xsyn_sess_abcdef", "syn_sess_abcdef\n", "syn_sess_abcdeé",
	"syn_sess_" + strings.Repeat("a", 80), "syn_sess_" + strings.Repeat("a", 81), "syn_sess_abc\x00ef",
}

func TestValidHandleMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(handlePattern)
	for _, s := range handleCases {
		if got, want := validHandle(s), re.MatchString(s); got != want {
			t.Errorf("validHandle(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidHandle(f *testing.F) {
	for _, s := range handleCases {
		f.Add(s)
	}
	re := regexp.MustCompile(handlePattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validHandle(s), re.MatchString(s); got != want {
			t.Errorf("validHandle(%q) = %v, want %v", s, got, want)
		}
	})
}
