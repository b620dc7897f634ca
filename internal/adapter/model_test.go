package adapter

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
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
	patterntest.Match(t, modelCases, patterntest.Check{Name: "ValidModel", Pattern: modelPattern, Func: func(s string) bool { return ValidModel(s) == nil }})
}

func FuzzValidModel(f *testing.F) {
	patterntest.Fuzz(f, modelCases, patterntest.Check{Name: "ValidModel", Pattern: modelPattern, Func: func(s string) bool { return ValidModel(s) == nil }})
}
