package event

import (
	"log/slog"
	"path/filepath"

	"github.com/coagent8/coagent8/internal/redact"
)

// OpenStateLog opens the security event log, events.jsonl in stateDir,
// redacted with red. If it cannot be opened, events go to log instead (at
// warning level, identifiers only) and the problem is logged; a refusal
// still refuses. Call the returned func when done.
func OpenStateLog(stateDir string, red *redact.Redactor, log *slog.Logger) (Sink, func()) {
	path := filepath.Join(stateDir, "events.jsonl")
	fs, err := OpenFile(path, red)
	if err != nil {
		log.Warn("security event log unavailable; events go to stderr", "path", path, "error", err.Error())
		return logSink{log}, func() {}
	}
	return fs, func() { fs.Close() }
}

type logSink struct{ log *slog.Logger }

func (l logSink) Record(e Event) error {
	l.log.Warn("security event", "type", e.Type, "code", e.Code, "reason", e.Reason, "backend", e.Backend, "model", e.Model, "rule", e.Rule)
	return nil
}
