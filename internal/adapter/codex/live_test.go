package codex

import (
	"context"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestConsultAndResume runs the pinned Codex CLI through the backend
// against the Responses double: a full turn returns the double's answer,
// and a second call with the returned SessionID resumes the same thread in
// a new app-server process (the double sees the earlier turn).
func TestConsultAndResume(t *testing.T) {
	h := newHarness(t, clitest.Path(t, "codex"), "",
		providertest.Reply{Text: "FIRST-ANSWER-from-double", Chunks: 3},
		providertest.Reply{Text: "SECOND-ANSWER-from-double"})
	b := h.backend(Options{})
	obs := &recorder{}
	turn := h.turn("first question: remember the word PELICAN")
	turn.Observer = obs
	res, err := b.Run(context.Background(), turn)
	if err != nil {
		t.Fatalf("first Run: %v (cause %v)", err, errorsCause(err))
	}
	if res.Text != "FIRST-ANSWER-from-double" || res.Model != testModel || res.SessionID == "" {
		t.Fatalf("first result = %+v", res)
	}
	if got := obs.deltas.String(); got != res.Text {
		t.Errorf("streamed deltas = %q, want %q", got, res.Text)
	}
	if !strings.HasPrefix(res.Verified, "codex.thread: sandbox=readOnly") {
		t.Errorf("Verified = %q", res.Verified)
	}
	if res.Usage.InputTokens == 0 || res.Usage.OutputTokens == 0 {
		t.Errorf("usage not reported: %+v", res.Usage)
	}
	next := h.turn("second question")
	next.SessionID = res.SessionID
	res2, err := b.Run(context.Background(), next)
	if err != nil {
		t.Fatalf("resume Run: %v (cause %v)", err, errorsCause(err))
	}
	if res2.Text != "SECOND-ANSWER-from-double" || res2.SessionID != res.SessionID {
		t.Fatalf("resume result = %+v, want same session %s", res2, res.SessionID)
	}
	bodies := h.responses()
	if len(bodies) != 2 {
		t.Fatalf("double saw %d model requests, want 2", len(bodies))
	}
	for _, want := range []string{"PELICAN", "FIRST-ANSWER-from-double", "second question"} {
		if !strings.Contains(bodies[1], want) {
			t.Errorf("resumed request lacks %q (earlier turn not in input)", want)
		}
	}
	for _, r := range h.double.Requests() {
		if got := r.Credential(); got != dummyKey() {
			t.Errorf("double got credential %q, want the configured env_key value", got)
		}
	}
}
