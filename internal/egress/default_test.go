package egress

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestDefaultConfig: the built-in policy is valid, sends ordinary bodies
// raw, refuses a credential and any transmission under the
// closed diagnostic purpose (local records only),
// and opens the account with the documented ceilings.
func TestDefaultConfig(t *testing.T) {
	credential := "sk-ant-api03-" + strings.Repeat("A", 93) + "AA"
	tests := []struct {
		name    string
		purpose Purpose
		text    string
		want    string // reason
	}{
		{"plain text raw", ProviderRequest, "please refactor the parser in main.go", ReasonRaw},
		{"private-looking text is raw without labels", ProviderRequest, dealNotes, ReasonRaw},
		{"credential refused", ProviderRequest, "deploy with " + credential, ReasonCategory},
		{"diagnostic purpose never transmits", DiagnosticRecording, "plain", ReasonPurpose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, DefaultConfig())
			in := tx(t, tt.text)
			in.Purpose = tt.purpose
			out, err := f.d.Seal(context.Background(), in)
			got := ReasonRaw
			if err != nil {
				got = fault.From(err).Reason
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("reason (-want +got):\n%s", diff)
			}
			if err == nil && string(out) != string(in.Body) {
				t.Errorf("raw decision changed the body")
			}
			if err != nil && !errors.Is(err, fault.New(fault.PolicyDenied, tt.want, "")) {
				t.Errorf("refusal is not POLICY_DENIED/%s: %v", tt.want, err)
			}
		})
	}
}

func TestDefaultConfigCeilings(t *testing.T) {
	f := newFixture(t, DefaultConfig())
	in := tx(t, "hello")
	if _, err := f.d.Seal(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	c, left, ok, err := f.led.Remaining(context.Background(), string(ProviderRequest))
	if err != nil || !ok {
		t.Fatalf("account not opened: %v", err)
	}
	want := Ceiling{Uses: 1_000_000, Bytes: 256 << 30}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("ceiling (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Ceiling{Uses: want.Uses - 1, Bytes: want.Bytes - int64(len(in.Body))}, left); diff != "" {
		t.Errorf("remaining (-want +got):\n%s", diff)
	}
}
