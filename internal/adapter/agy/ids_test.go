package agy

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

// idPatterns are the regular expressions the hand-written checks implement.
var idPatterns = []patterntest.Check{
	{Name: "eventID", Pattern: `^[A-Za-z0-9._:/-]{1,128}$`, Func: eventID},
}

var idCases = []string{
	"", "a", "-", ".", "/a", "msg_01:abc/def-1.2", "a b", "a_b", "a\n", "a\x00", "é", "a\xff",
	strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("/", 128),
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e", "0199A6C4-7B1E-7C3A-9D2F-4E5A6B7C8D9E",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e0",
	"0199a6c47b1e-7c3a-9d2f-4e5a6b7c8d9e-", "g199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9\n", "------------------------------------",
}

func TestIDChecksMatchPatterns(t *testing.T) { patterntest.Match(t, idCases, idPatterns...) }

func FuzzIDChecks(f *testing.F) { patterntest.Fuzz(f, idCases, idPatterns...) }
