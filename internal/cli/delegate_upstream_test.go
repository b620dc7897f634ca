package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/upstream"
)

// TestDelegateGateRefusesRemoteUnsafeUpstream: the delegate gate refuses
// an override that is not a loopback http(s) origin with a port, before it
// opens anything, as INVALID_INPUT delegate.unsafe_upstream, and records
// no event (nothing was overridden).
func TestDelegateGateRefusesRemoteUnsafeUpstream(t *testing.T) {
	for _, v := range []string{"anthropic=https://api.example.com", "anthropic=http://10.0.0.1:80", "anthropic=http://127.0.0.1", "anthropic"} {
		mem := &event.Memory{}
		a := &app{env: config.FromList([]string{"HOME=" + t.TempDir(), UnsafeUpstreamVar + "=" + v})}
		l := &lazyDelegation{a: a, events: mem}
		_, err := l.gate(context.Background())
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != upstream.ReasonUnsafe || !strings.Contains(fe.Message, UnsafeUpstreamVar) {
			t.Errorf("%s: gate() error = %v, want INVALID_INPUT %s naming the variable", v, err, upstream.ReasonUnsafe)
		}
		if n := len(mem.Events()); n != 0 {
			t.Errorf("%s: %d events recorded, want 0", v, n)
		}
	}
}

// TestDelegateGateRecordsUnsafeUpstream: a valid override is applied and
// the security log records it, naming the variable, the provider and the
// local origin the real credential goes to.
func TestDelegateGateRecordsUnsafeUpstream(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY").With(UnsafeUpstreamVar, "anthropic=http://127.0.0.1:9")
	mem := &event.Memory{}
	l := &lazyDelegation{a: &app{env: env}, events: mem}
	defer l.close()
	if _, err := l.gate(context.Background()); err != nil {
		t.Fatalf("gate: %v", err)
	}
	var got []string
	for _, e := range mem.Events() {
		if e.Reason == upstream.ReasonUnsafe {
			got = append(got, e.IDs["provider"]+" "+e.IDs["upstream"])
			if !strings.Contains(e.Detail, UnsafeUpstreamVar) || !strings.Contains(e.Detail, "real credential") {
				t.Errorf("detail = %q", e.Detail)
			}
		}
	}
	if len(got) != 1 || got[0] != "anthropic http://127.0.0.1:9" {
		t.Errorf("unsafe-upstream events = %q, want one for anthropic http://127.0.0.1:9", got)
	}
}

// TestGateServeRefusesRemoteUnsafeUpstream: `gate serve`'s hidden
// --unsafe-loopback-upstream obeys the same rule as the variable.
func TestGateServeRefusesRemoteUnsafeUpstream(t *testing.T) {
	for _, v := range []string{"anthropic=https://api.example.com", "anthropic=http://127.0.0.1", "openai"} {
		code, out, errs := runGate(t, declaredEnv(t, "env:REAL_KEY"), "serve", "--listen", "127.0.0.1:0", "--unsafe-loopback-upstream", v)
		if code != ExitUsage || out != "" || !strings.Contains(errs, "INVALID_INPUT") || !strings.Contains(errs, "--unsafe-loopback-upstream wants PROVIDER=http://127.0.0.1:PORT") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want INVALID_INPUT naming the flag", v, code, out, errs)
		}
	}
}
