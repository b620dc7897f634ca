package cli

import (
	"io"
	"strings"

	"github.com/coagent8/coagent8/internal/redact"
)

// recordWriter redacts each Write as a whole: slog handlers write exactly
// one complete record per call, so no credential can straddle two calls.
type recordWriter struct {
	red *redact.Redactor
	w   io.Writer
}

func (r recordWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.red.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(strings.ToLower(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
