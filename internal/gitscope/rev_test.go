package gitscope

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

var revPatterns = []patterntest.Check{
	{Name: "isHexRev", Pattern: `^[0-9a-fA-F]{7,40}$`, Func: isHexRev},
	{Name: "isHeadRel", Pattern: `^HEAD([~^][0-9]*)+$`, Func: isHeadRel},
}

var revCases = []string{
	"", "abc", "abcdef", "abcdef0", "ABCDEF0", "abcdefg", strings.Repeat("a", 40), strings.Repeat("a", 41),
	"HEAD", "HEAD~", "HEAD^", "HEAD~2", "HEAD^2~1", "HEAD~~^", "HEAD2", "HEAD~x", "head~1", "xHEAD~1",
	"HEAD~1\n", "HEAD~1 ", "HEAD~10000000000000000000", "abcdef0\n", "abcdeé0",
}

func TestRevChecksMatchPatterns(t *testing.T) { patterntest.Match(t, revCases, revPatterns...) }

func FuzzRevChecks(f *testing.F) { patterntest.Fuzz(f, revCases, revPatterns...) }
