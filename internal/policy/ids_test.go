package policy

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

// idPattern is the regular expression ValidID implements by hand.
const idPattern = `^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$`

var idCases = []string{
	"", "a", "Z", "0", "-a", "--yolo", ".a", ":a", "/a", "[a", "]a", "_a",
	"claude-opus-4-1", "gpt-5.1-codex", "anthropic/claude:beta", "model[1m]",
	"a_b", "a b", "a;b", "a$b", "a\n", "a\x00", "é", "aé", "a\xff",
	strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat("-", 127),
}

func TestValidIDMatchesPattern(t *testing.T) {
	patterntest.Match(t, idCases, patterntest.Check{Name: "ValidID", Pattern: idPattern, Func: ValidID})
}

func FuzzValidID(f *testing.F) {
	patterntest.Fuzz(f, idCases, patterntest.Check{Name: "ValidID", Pattern: idPattern, Func: ValidID})
}
