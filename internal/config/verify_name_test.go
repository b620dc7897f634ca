package config

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

const bareProgramPattern = `^[A-Za-z0-9][A-Za-z0-9._+-]*$`

var bareProgramCases = []string{
	"", "go", "g++", "python3.12", "node_modules", "-rf", ".hidden", "_x", "a b", "a/b", "/usr/bin/go",
	"a\n", "a\x00", "é", "aé", "a\xff", strings.Repeat("a", 5000),
}

func TestBareProgramMatchesPattern(t *testing.T) {
	patterntest.Match(t, bareProgramCases, patterntest.Check{Name: "bareProgram", Pattern: bareProgramPattern, Func: bareProgram})
}

func FuzzBareProgram(f *testing.F) {
	patterntest.Fuzz(f, bareProgramCases, patterntest.Check{Name: "bareProgram", Pattern: bareProgramPattern, Func: bareProgram})
}
