package sandbox

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

const envPattern = `^[A-Za-z_][A-Za-z0-9_]*$`

var envCases = []string{
	"", "A", "_", "a", "0", "9A", "_9", "PATH", "A-B", "A.B", "A B", "A=", "A\n", "A\x00", "É", "AÉ", "A\xff",
	strings.Repeat("A", 1000),
}

func TestEnvNameMatchesPattern(t *testing.T) {
	patterntest.Match(t, envCases, patterntest.Check{Name: "envName", Pattern: envPattern, Func: envName})
}

func FuzzEnvName(f *testing.F) {
	patterntest.Fuzz(f, envCases, patterntest.Check{Name: "envName", Pattern: envPattern, Func: envName})
}
