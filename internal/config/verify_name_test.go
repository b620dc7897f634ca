package config

import (
	"regexp"
	"strings"
	"testing"
)

const bareProgramPattern = `^[A-Za-z0-9][A-Za-z0-9._+-]*$`

var bareProgramCases = []string{
	"", "go", "g++", "python3.12", "node_modules", "-rf", ".hidden", "_x", "a b", "a/b", "/usr/bin/go",
	"a\n", "a\x00", "é", "aé", "a\xff", strings.Repeat("a", 5000),
}

func TestBareProgramMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(bareProgramPattern)
	for _, s := range bareProgramCases {
		if got, want := bareProgram(s), re.MatchString(s); got != want {
			t.Errorf("bareProgram(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzBareProgram(f *testing.F) {
	for _, s := range bareProgramCases {
		f.Add(s)
	}
	re := regexp.MustCompile(bareProgramPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := bareProgram(s), re.MatchString(s); got != want {
			t.Errorf("bareProgram(%q) = %v, want %v", s, got, want)
		}
	})
}
