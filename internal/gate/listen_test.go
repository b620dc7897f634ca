package gate

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestListen: without TLS the gate listens on loopback only, and the
// refusal names the remedy `gate serve` offers (a loopback address), not a
// TLS setting it does not have.
func TestListen(t *testing.T) {
	tests := []struct {
		addr       string
		want       string // "" = listening, else "CODE reason"
		wantHost   string // the listener's host when listening
		wantInText string
	}{
		{"127.0.0.1:0", "", "127.0.0.1", ""},
		{"localhost:0", "", "127.0.0.1", ""},
		{"0.0.0.0:0", "POLICY_DENIED gate.listen", "", "loopback address only"},
		{"192.0.2.1:0", "POLICY_DENIED gate.listen", "", "serves no TLS"},
		{"127.0.0.1", "INVALID_INPUT gate.listen", "", "host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ln, err := Listen(tt.addr, nil)
			if err == nil {
				defer ln.Close()
				host := ln.Addr().String()[:strings.LastIndex(ln.Addr().String(), ":")]
				if tt.want != "" || host != tt.wantHost {
					t.Errorf("listening on %s, want %q", ln.Addr(), tt.want)
				}
				return
			}
			fe := fault.From(err)
			if got := string(fe.Code) + " " + fe.Reason; got != tt.want || !strings.Contains(fe.Message, tt.wantInText) {
				t.Errorf("got %s %q, want %s containing %q", got, fe.Message, tt.want, tt.wantInText)
			}
		})
	}
}
