package codex

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

// idPatterns are the regular expressions the hand-written checks implement.
var idPatterns = []patterntest.Check{
	{Name: "envKey", Pattern: `^[A-Za-z_][A-Za-z0-9_]{0,127}$`, Func: envKey},
	{Name: "bareKey", Pattern: `^[A-Za-z0-9_-]+$`, Func: bareKey},
}

var idCases = []string{
	"", "A", "_", "a", "0", "-", "9A", "_9", "OPENAI_API_KEY", "A-B", "A.B", "A B", "A*", "A=",
	"my-server", "my_server", "my.server", "'x'", "\"a.b\"", "A\n", "A\x00", "É", "AÉ", "A\xff",
	strings.Repeat("A", 128), strings.Repeat("A", 129), strings.Repeat("-", 300),
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e", "0199A6C4-7B1E-7C3A-9D2F-4E5A6B7C8D9E",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e0",
	"0199a6c47b1e-7c3a-9d2f-4e5a6b7c8d9e-", "0199a6c4_7b1e_7c3a_9d2f_4e5a6b7c8d9e",
	"g199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9\n",
}

func TestIDChecksMatchPatterns(t *testing.T) { patterntest.Match(t, idCases, idPatterns...) }

func FuzzIDChecks(f *testing.F) { patterntest.Fuzz(f, idCases, idPatterns...) }
