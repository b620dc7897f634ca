package evidence

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

const tokenPattern = `^[a-z0-9][a-z0-9._:-]{0,63}$`

var tokenCases = []string{
	"", "a", "0", "A", "-a", ".a", "audit", "egress.decision:v1", "a_b", "a b", "aB", "a\n", "a\x00", "é", "a\xff",
	strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat(":", 63),
}

func TestTokenMatchesPattern(t *testing.T) {
	patterntest.Match(t, tokenCases, patterntest.Check{Name: "token", Pattern: tokenPattern, Func: token})
}

func FuzzToken(f *testing.F) {
	patterntest.Fuzz(f, tokenCases, patterntest.Check{Name: "token", Pattern: tokenPattern, Func: token})
}
