package price

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

var idCases = []string{
	"", "a", "Z", "0", "-a", ".a", "/a", "[a", "_a", "o", "o1", "o3-mini", "oa", "O1", "xo1",
	"anthropic/claude-opus-4.1", "openai/gpt-5:nitro", "model[1m]",
	"a b", "a\n", "a\x00", "é", "aé", "a\xff",
	strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat("]", 127),
}

var handChecks = []patterntest.Check{
	{Name: "validID", Pattern: `^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`, Func: validID},
	{Name: "oSeries", Pattern: `^o[0-9]`, Func: oSeries},
}

func TestHandCheckersMatchPatterns(t *testing.T) { patterntest.Match(t, idCases, handChecks...) }

func FuzzHandCheckers(f *testing.F) { patterntest.Fuzz(f, idCases, handChecks...) }
