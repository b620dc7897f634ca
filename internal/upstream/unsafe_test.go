package upstream

import (
	"errors"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

func TestParseUnsafe(t *testing.T) {
	tests := []struct {
		in   string
		want string // origin, "" = refused
	}{
		{"anthropic=http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"openai=https://[::1]:9/", "https://[::1]:9"},
		{"anthropic=http://localhost:1", "http://localhost:1"},
		{"anthropic=https://api.example.com", ""},
		{"anthropic=https://api.example.com:443", ""},
		{"anthropic=http://127.0.0.2:80", ""},
		{"anthropic=http://127.0.0.1", ""},
		{"anthropic=http://127.0.0.1:0", ""},
		{"anthropic=http://127.0.0.1:70000", ""},
		{"anthropic=ftp://127.0.0.1:21", ""},
		{"anthropic=file:///etc/passwd", ""},
		{"anthropic=unix:/tmp/sock", ""},
		{"anthropic=http://u:p@127.0.0.1:80", ""},
		{"anthropic=http://127.0.0.1:80/v1", ""},
		{"anthropic=http://0.0.0.0:80", ""},
		{"google=http://127.0.0.1:80", ""},
		{"http://127.0.0.1:80", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := ParseUnsafe(tt.in)
		if tt.want == "" {
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != ReasonUnsafe {
				t.Errorf("ParseUnsafe(%q) = %+v, %v; want INVALID_INPUT %s", tt.in, got, err, ReasonUnsafe)
			}
			continue
		}
		if err != nil || got.Origin != tt.want {
			t.Errorf("ParseUnsafe(%q) = %+v, %v; want origin %s", tt.in, got, err, tt.want)
		}
	}
}
