package redact

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// NewHandler returns a slog.Handler that redacts the message and every
// attribute value with r before passing the record to inner (R-047: logs).
// Use a [Diagnostic] redactor. Errors, fmt.Stringers and other values are
// formatted to text and redacted; slog.LogValuers are resolved first; group
// and attribute keys are left as they are (they are code constants).
func NewHandler(inner slog.Handler, r *Redactor) slog.Handler {
	return &handler{inner: inner, r: r}
}

type handler struct {
	inner slog.Handler
	r     *Redactor
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &handler{inner: h.inner.WithAttrs(red), r: h.r}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), r: h.r}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		gs := v.Group()
		red := make([]any, len(gs))
		for i, g := range gs {
			red[i] = h.attr(g)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		return slog.String(a.Key, h.r.String(anyText(v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v} // numbers, bools, times, durations
}

// anyText formats values that are not strings; errors give their full
// message chain (a fault's internal cause is reached through Unwrap by the
// caller's own logging, not here).
func anyText(v any) string {
	switch x := v.(type) {
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprintf("%+v", v)
}

// NewLogger returns coagent8's diagnostic logger: text records on w (the
// terminal's stderr; never stdout, which is the MCP channel), debug level
// when debug is set, every value redacted with the diagnostic profile for
// home.
func NewLogger(w io.Writer, home string, debug bool) *slog.Logger {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(NewHandler(h, NewDiagnostic(home)))
}
