package crash_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// TestGoRecovers: a panic on a goroutine started with Guard.Go ends that
// goroutine only; fail gets PROCESS_ERROR internal.panic and the log has
// the panic and its stack with the credential in the value redacted.
func TestGoRecovers(t *testing.T) {
	var logged bytes.Buffer
	g, err := crash.New(slog.New(slog.NewTextHandler(&logged, nil)), redact.NewDiagnostic("/home/u"))
	if err != nil {
		t.Fatal(err)
	}
	key := "sk-ant-api03-" + strings.Repeat("Q", 40) + "AA"
	got := make(chan error, 1)
	g.Go("delegate job", func() { panic("bad state near " + key) }, func(err error) { got <- err })
	err = <-got
	if !errors.Is(err, fault.New(fault.ProcessError, crash.Reason, "")) {
		t.Fatalf("fail got %v, want PROCESS_ERROR %s", err, crash.Reason)
	}
	if want := "internal error in delegate job"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	log := logged.String()
	if !strings.Contains(log, "recovered a panic") || !strings.Contains(log, "crash_test.go") {
		t.Errorf("log lacks the panic or its stack:\n%s", log)
	}
	if strings.Contains(log, key) {
		t.Errorf("the credential reached the log:\n%s", log)
	}
}

// TestRecoverQuiet: without a panic, Recover calls nothing and logs nothing.
func TestRecoverQuiet(t *testing.T) {
	var logged bytes.Buffer
	g, _ := crash.New(slog.New(slog.NewTextHandler(&logged, nil)), redact.NewDiagnostic(""))
	called := false
	func() {
		defer g.Recover("x", func(error) { called = true })
	}()
	if called || logged.Len() > 0 {
		t.Errorf("fail called %v, log %q; want neither", called, logged.String())
	}
}

// TestNilGuard: a nil Guard still recovers and reports the typed error.
func TestNilGuard(t *testing.T) {
	var g *crash.Guard
	var got error
	func() {
		defer g.Recover("gate drain", func(err error) { got = err })
		panic("boom")
	}()
	if fault.From(got).Reason != crash.Reason {
		t.Errorf("got %v, want reason %s", got, crash.Reason)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		log  *slog.Logger
		diag *redact.Redactor
		want string
	}{
		{"no logger", nil, redact.NewDiagnostic(""), "crash.config"},
		{"no redactor", slog.New(slog.DiscardHandler), nil, "crash.config"},
		{"complete", slog.New(slog.DiscardHandler), redact.NewDiagnostic(""), ""},
	}
	for _, tt := range tests {
		_, err := crash.New(tt.log, tt.diag)
		if got := fault.From(err); (got == nil) != (tt.want == "") || got != nil && got.Reason != tt.want {
			t.Errorf("%s: got %v, want reason %q", tt.name, err, tt.want)
		}
	}
}
