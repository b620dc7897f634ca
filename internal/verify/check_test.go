package verify

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/review"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		argv []string
		want Kind
	}{
		{[]string{"/usr/local/go/bin/go", "test", "./..."}, KindTests},
		{[]string{"/usr/bin/npm", "run", "test:unit"}, KindTests},
		{[]string{"/usr/bin/pytest", "-q"}, KindTests},
		{[]string{"/usr/bin/make", "check"}, KindTypecheck},
		{[]string{"/usr/local/go/bin/go", "vet", "./..."}, KindTypecheck},
		{[]string{"/usr/bin/tsc", "--noEmit"}, KindTypecheck},
		{[]string{"/usr/bin/true"}, KindOther},
		{[]string{"/usr/bin/make", "testing-docs"}, KindOther},
	}
	for _, tt := range tests {
		if got := KindOf(tt.argv); got != tt.want {
			t.Errorf("KindOf(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

func TestDisplayAndOutcome(t *testing.T) {
	tests := []struct {
		c             Check
		display, outc string
	}{
		{Check{Command: []string{"/usr/local/go/bin/go", "test", "./..."}, Status: Failed, Exit: "exited", ExitCode: 1},
			"go test ./...", "exited 1"},
		{Check{Command: []string{"/usr/bin/sh", "-c", "echo $HOME"}, Status: Failed, Exit: "signalled", Signal: "SIGKILL"},
			`sh -c "echo $HOME"`, "was killed by SIGKILL"},
		{Check{Command: []string{"/usr/bin/make"}, Status: Failed, Exit: "timed_out", ExitCode: -1}, "make", "ended timed out"},
		{Check{Command: []string{"/usr/bin/true", ""}, Status: Passed, Exit: "exited"}, `true ""`, "passed"},
		{Check{Command: []string{"/usr/bin/true"}, Status: NotRun, Reason: "no sandbox"}, "true", "was not run: no sandbox"},
	}
	for _, tt := range tests {
		if got := []string{tt.c.Display(), tt.c.Outcome()}; !cmp.Equal(got, []string{tt.display, tt.outc}) {
			t.Errorf("Display/Outcome = %q, want %q, %q", got, tt.display, tt.outc)
		}
	}
}

func TestJudge(t *testing.T) {
	goTest := Check{Command: []string{"/g/go", "test", "./..."}, Kind: KindTests}
	vet := Check{Command: []string{"/g/go", "vet", "./..."}, Kind: KindTypecheck}
	other := Check{Command: []string{"/usr/bin/make"}, Kind: KindOther}
	with := func(c Check, s Status) Check {
		c.Status, c.Exit, c.ExitCode = s, "exited", 0
		if s == Failed {
			c.ExitCode = 2
		}
		if s == NotRun {
			c.Exit, c.Reason = "", "sandbox refused"
		}
		return c
	}
	pass := review.Checks{Typecheck: "PASS", Tests: "PASS"}
	tests := []struct {
		name   string
		checks []Check
		claims review.Checks
		want   Judgement
	}{
		{"all pass, claims pass", []Check{with(goTest, Passed), with(vet, Passed)}, pass, Judgement{}},
		{"tests fail under a PASS claim", []Check{with(goTest, Failed), with(vet, Passed)}, pass,
			Judgement{true, []string{"the model claimed tests=PASS but `go test ./...` exited 2"}}},
		{"typecheck fails, model did not run it", []Check{with(vet, Failed)}, review.Checks{Typecheck: "NOT_RUN", Tests: "NOT_RUN"},
			Judgement{true, []string{"configured check `go vet ./...` exited 2"}}},
		{"unknown kind takes the PASS claim", []Check{with(other, Failed)}, review.Checks{Typecheck: "PASS", Tests: "NOT_RUN"},
			Judgement{true, []string{"the model claimed typecheck=PASS but `make` exited 2"}}},
		{"not run is a warning, not a failure", []Check{with(goTest, NotRun)}, pass,
			Judgement{false, []string{"configured check `go test ./...` was not run: sandbox refused"}}},
		{"model claims FAIL but it passed", []Check{with(goTest, Passed)}, review.Checks{Tests: "fail"},
			Judgement{false, []string{"the model claimed tests=FAIL but `go test ./...` passed"}}},
		{"no checks", nil, pass, Judgement{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Judge(tt.checks, tt.claims)); d != "" {
				t.Errorf("Judge (-want +got):\n%s", d)
			}
		})
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"short", 8, []string{"a\n", "b\n"}, "a\nb\n"},
		{"cut at the next line", 12, []string{"line one\n", "line two\n", "three\n"}, "…\nthree\n"},
		{"many small writes", 5, []string{strings.Repeat("x", 10), strings.Repeat("y", 10), "z\nend"}, "…\nend"},
		{"line too long: cut at a rune start", 5, []string{"ééééé"}, "…\néé"},
	}
	for _, tt := range tests {
		tl := newTail(tt.max)
		for _, w := range tt.writes {
			tl.Write([]byte(w))
		}
		if got := tl.String(); got != tt.want {
			t.Errorf("%s: tail = %q, want %q", tt.name, got, tt.want)
		}
	}
}
