package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStrippedKeys(t *testing.T) {
	tests := []struct {
		env     []string
		backend string
		want    []string
	}{
		{[]string{"ANTHROPIC_API_KEY=k"}, "claude", []string{"ANTHROPIC_API_KEY"}},
		{[]string{"ANTHROPIC_API_KEY=k", "COAGENT8_API_KEY_BILLING=codex, Claude"}, "claude", nil},
		{[]string{"ANTHROPIC_API_KEY=k", "COAGENT8_API_KEY_BILLING=all"}, "claude", nil},
		{[]string{"OPENAI_API_KEY=k", "CODEX_API_KEY=k", "COAGENT8_API_KEY_BILLING=claude"}, "codex", []string{"OPENAI_API_KEY", "CODEX_API_KEY"}},
		{[]string{"ANTHROPIC_API_KEY="}, "claude", nil},
		{[]string{"GEMINI_API_KEY=k"}, "agy", []string{"GEMINI_API_KEY"}},
		{[]string{"ANTHROPIC_API_KEY=k"}, "codex", nil},
	}
	for _, tt := range tests {
		if got := FromList(tt.env).StrippedKeys(tt.backend); !cmp.Equal(tt.want, got) {
			t.Errorf("StrippedKeys(%v, %s) = %v, want %v", tt.env, tt.backend, got, tt.want)
		}
	}
	if h := FromList([]string{"ANTHROPIC_API_KEY=sk-secret"}).StrippedKeysHint("claude"); h !=
		"ANTHROPIC_API_KEY is set but not passed to the claude CLI because API-key billing is off: set COAGENT8_API_KEY_BILLING=claude to bill that key, or log the CLI in to its own account" {
		t.Errorf("hint = %q", h)
	}
}
