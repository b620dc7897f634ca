package gate

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

// idCases exercise the edges of the id alphabets: length bounds, first
// byte, every extra byte, control and non-ASCII bytes, invalid UTF-8.
var idCases = []string{
	"", "a", "Z", "0", "-a", ".a", ":a", "/a", "[a", "]a", "_a",
	"claude-opus-4-1", "gpt-5.1-codex", "anthropic/claude:beta", "model[1m]",
	"a_b", "a b", "a\n", "a\x00", "a\t", "é", "aé", "a\xff", "\xffa",
	"job:1.2-3", "job/1", "job[1]",
	strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129),
	"a" + strings.Repeat("-", 127), "a" + strings.Repeat("-", 128),
}

var handChecks = []patterntest.Check{
	{Name: "validModelID", Pattern: `^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`, Func: validModelID},
	{Name: "validJobID", Pattern: `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`, Func: validJobID},
}

func TestIDCheckersMatchPatterns(t *testing.T) { patterntest.Match(t, idCases, handChecks...) }

func FuzzIDCheckers(f *testing.F) { patterntest.Fuzz(f, idCases, handChecks...) }
