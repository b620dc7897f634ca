package adapter

import (
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

const uuidPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

var uuidCases = []string{
	"", "a", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e", "0199A6C4-7B1E-7C3A-9D2F-4E5A6B7C8D9E",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e0",
	"0199a6c47b1e-7c3a-9d2f-4e5a6b7c8d9e-", "g199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9e",
	"0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8d9\n", "------------------------------------",
	"0199a6c4_7b1e_7c3a_9d2f_4e5a6b7c8d9e", "0199a6c4-7b1e-7c3a-9d2f-4e5a6b7c8dé",
}

func TestIsUUIDMatchesPattern(t *testing.T) {
	patterntest.Match(t, uuidCases, patterntest.Check{Name: "IsUUID", Pattern: uuidPattern, Func: IsUUID})
}

func FuzzIsUUID(f *testing.F) {
	patterntest.Fuzz(f, uuidCases, patterntest.Check{Name: "IsUUID", Pattern: uuidPattern, Func: IsUUID})
}
