package cli

import (
	"log/slog"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/verify"
)

// verifier builds what runs the user's review checks (config.json
// verify.commands, issue 8): the task sandbox, qualifying itself on first
// use (notice on stderr), recording its security events in events. A
// sandbox that cannot be configured leaves nil: configured checks are then
// reported as not run, never run unsandboxed.
func (a *app) verifier(log *slog.Logger, events event.Sink) *verify.Verifier {
	sb, err := sandbox.New(sandbox.Config{StateDir: a.env.StateDir(), AutoQualify: true, Notice: a.io.Err, Events: events})
	if err != nil {
		log.Warn("task sandbox unavailable; review checks will not run", "error", err.Error())
		return nil
	}
	v, err := verify.New(verify.Config{Sandbox: sb, Home: a.env.Home(), GoModCache: verify.GoModCache(a.env)})
	if err != nil {
		log.Warn("review checks unavailable", "error", err.Error())
		return nil
	}
	return v
}
