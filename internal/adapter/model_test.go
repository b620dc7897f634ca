package adapter

import (
	"regexp"
	"strings"
	"testing"
)

// modelPattern is the regular expression ValidModel implements by hand.
const modelPattern = `^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`

var modelCases = []string{
	"", "a", "Z", "0", "-a", "--yolo", ".a", ":a", "/a", "[a", "]a", "_a",
	"claude-opus-4-1", "gpt-5.1-codex", "anthropic/claude:beta", "model[1m]",
	"a_b", "a b", "a;b", "a$b", "a\n", "a\x00", "é", "aé", "a\xff",
	strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat("-", 127),
}

func TestValidModelMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(modelPattern)
	for _, s := range modelCases {
		if got, want := ValidModel(s) == nil, re.MatchString(s); got != want {
			t.Errorf("ValidModel(%q) accepts = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidModel(f *testing.F) {
	for _, s := range modelCases {
		f.Add(s)
	}
	re := regexp.MustCompile(modelPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidModel(s) == nil, re.MatchString(s); got != want {
			t.Errorf("ValidModel(%q) accepts = %v, want %v", s, got, want)
		}
	})
}
