package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
)

// TestToolProfile: the environment variable wins over the configuration;
// an unknown value logs a warning naming the accepted values and
// canonical is used.
func TestToolProfile(t *testing.T) {
	tests := []struct {
		env, file, want string
		warn            bool
	}{
		{"", "compact", "compact", false},
		{"", "canonical", "canonical", false},
		{"compact", "canonical", "compact", false},
		{"canonical", "compact", "canonical", false},
		{"tiny", "compact", "canonical", true},
		{"Compact", "compact", "canonical", true},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		a := &app{env: config.FromList([]string{"COAGENT8_TOOL_PROFILE=" + tt.env})}
		got := a.toolProfile(config.File{ToolProfile: tt.file}, slog.New(slog.NewTextHandler(&logs, nil)))
		warned := strings.Contains(logs.String(), `accepted="canonical, compact"`) &&
			strings.Contains(logs.String(), "value="+tt.env) && strings.Contains(logs.String(), "level=WARN")
		if got != tt.want || warned != tt.warn {
			t.Errorf("env %q, file %q: profile %q, warned %v (%q); want %q, warned %v", tt.env, tt.file, got, warned, logs.String(), tt.want, tt.warn)
		}
	}
}
