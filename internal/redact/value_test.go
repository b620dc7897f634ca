package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

func TestValue(t *testing.T) {
	c := redacttest.Canaries()[0]
	in := map[string]any{
		"answer": "key " + c.Text,
		"list":   []any{c.Text, 1.5, true, nil},
		c.Text:   "as a key",
		"nested": map[string]any{"s": []string{c.Text}},
	}
	got := redact.NewAnswer().Value(in)
	want := map[string]any{
		"answer": "key " + c.Want,
		"list":   []any{c.Want, 1.5, true, nil},
		c.Want:   "as a key",
		"nested": map[string]any{"s": []string{c.Want}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Value (-want +got):\n%s", d)
	}
	type S struct{ Token string }
	if got, want := redact.NewAnswer().Value(S{c.Text}), map[string]any{"Token": c.Want}; !cmp.Equal(got, want) {
		t.Errorf("Value(struct) = %v, want %v", got, want)
	}
}

// TestHandler pushes every canary through a redacting slog handler as the
// message, a string attribute, an error, a group and a WithAttrs attribute.
func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	inner := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	log := slog.New(redact.NewHandler(inner, redact.NewDiagnostic("/home/u")))
	cs := redacttest.All()
	for _, c := range cs {
		l := log.With("ctx", c.Text).WithGroup("g")
		l.Info("msg "+c.Text, "s", c.Text, "err", errors.New("failed: "+c.Text),
			slog.Group("grp", "v", c.Text), "n", 3, "any", []string{c.Text})
	}
	redacttest.AssertNoLeak(t, buf.Bytes(), cs)
	if !bytes.Contains(buf.Bytes(), []byte(`"n":3`)) || !bytes.Contains(buf.Bytes(), []byte("[REDACTED:")) {
		t.Errorf("log lost non-secret content: %s", buf.Bytes())
	}
}
