package fault

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorKeepsCauseOutOfPublicText(t *testing.T) {
	cause := errors.New("secret-internal-detail")
	err := Wrap(ProcessError, "claude.exit", "the CLI exited", cause)
	if strings.Contains(err.Error(), "secret-internal-detail") {
		t.Fatalf("public text leaked the cause: %q", err.Error())
	}
	if got, want := err.Error(), "PROCESS_ERROR: the CLI exited"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) {
		t.Fatal("errors.Is does not reach the cause")
	}
}

func TestFromTypesUnknownAsProcessError(t *testing.T) {
	tests := []struct {
		name string
		in   error
		want Code
	}{
		{"plain", errors.New("boom"), ProcessError},
		{"typed", New(InputLimit, "prompt.size", "too big"), InputLimit},
		{"wrapped typed", fmt.Errorf("step: %w", New(AuthRequired, "a", "b")), AuthRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := From(tt.in).Code; got != tt.want {
				t.Fatalf("From(%v).Code = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	if From(nil) != nil {
		t.Fatal("From(nil) != nil")
	}
}

func TestIsMatchesCodeAndOptionalReason(t *testing.T) {
	err := fmt.Errorf("run: %w", New(SandboxUnavailable, "claude.startup_report", "x"))
	if !errors.Is(err, New(SandboxUnavailable, "", "")) {
		t.Fatal("code match failed")
	}
	if errors.Is(err, New(SandboxUnavailable, "codex.thread_policy", "")) {
		t.Fatal("reason mismatch matched")
	}
	if !HasCode(err, SandboxUnavailable) || HasCode(err, Timeout) {
		t.Fatal("HasCode wrong")
	}
}

// TestQuoteInput: echoed user input is quoted, bounded and never carries
// a control, bidirectional or invalid byte as itself.
func TestQuoteInput(t *testing.T) {
	long := strings.Repeat("é", 70)
	for _, tt := range []struct{ in, want string }{
		{"job_1", `"job_1"`},
		{"", `""`},
		{"a b", `"a b"`},
		{"\x1b[2Kx", `"\x1b[2Kx"`},
		{"a\u202eb", `"a\u202eb"`},
		{"\xff", `"\xff"`},
		{"a\nb", `"a\nb"`},
		{long, `"` + strings.Repeat("é", 64) + `"…`},
	} {
		if got := QuoteInput(tt.in); got != tt.want {
			t.Errorf("QuoteInput(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
