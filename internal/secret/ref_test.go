package secret

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

// envPattern is the regular expression envName implements by hand.
const envPattern = `^[A-Za-z_][A-Za-z0-9_]{0,127}$`

var envCases = []string{
	"", "A", "_", "a", "0", "9A", "_9", "A9", "ANTHROPIC_API_KEY", "A-B", "A.B", "A B",
	"A=", "A\n", "A\x00", "É", "AÉ", "A\xff",
	strings.Repeat("A", 128), strings.Repeat("A", 129), "_" + strings.Repeat("9", 127),
}

func TestEnvNameMatchesPattern(t *testing.T) {
	patterntest.Match(t, envCases, patterntest.Check{Name: "envName", Pattern: envPattern, Func: envName})
}

func FuzzEnvName(f *testing.F) {
	patterntest.Fuzz(f, envCases, patterntest.Check{Name: "envName", Pattern: envPattern, Func: envName})
}
