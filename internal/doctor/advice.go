package doctor

import (
	"fmt"
	"strings"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/process"
)

// ready reports whether b can take a turn now: a supported version, a
// read-only profile verified just now and no known missing login.
func ready(b Backend) bool {
	return b.Supported && b.ReadOnlyVerified && b.AuthStatus != "unauthenticated"
}

// backendNames are the products behind the backend ids, with how to log
// in to each (their own documentation).
var backendNames = map[string]struct{ product, login string }{
	"claude": {"Claude Code", "run claude and use /login"},
	"codex":  {"Codex", "run codex login"},
	"agy":    {"agy", "run agy and sign in"},
}

// advice returns what to do when no backend is ready, one line per
// installed backend saying what it lacks, or the install step when none
// is installed, so the advice matches the state found.
func advice(backends []Backend) []string {
	var out []string
	for _, b := range backends {
		if b.Installed && !ready(b) {
			out = append(out, backendAdvice(b))
		}
	}
	if len(out) == 0 {
		out = append(out, "No backend CLI is installed: install Claude Code or Codex (or set CLAUDE_PATH / CODEX_PATH to one; "+
			"a coagent8 checkout's .tools/ copies are for its tests, see the README), log in, then run doctor again.")
	}
	return out
}

func backendAdvice(b Backend) string {
	n, ok := backendNames[b.Backend]
	if !ok {
		n.product, n.login = b.Backend, "log in"
	}
	switch {
	case !b.Supported && b.Version != "" && b.MinVersion != "":
		return fmt.Sprintf("%s %s is installed but unsupported: upgrade it to %s or later, then run doctor again.", n.product, b.Version, b.MinVersion)
	case !b.Supported && b.Error != nil:
		return fmt.Sprintf("%s is installed but cannot be used: %s", n.product, b.Error.Message)
	case !b.Supported:
		return fmt.Sprintf("%s is installed but cannot be used; see its section.", n.product)
	case b.AuthStatus == "unauthenticated" && b.APIKeyNote != "":
		// An API-key user is not "not logged in" in their own eyes: say
		// the key is withheld and how to pass it (issue 19 item 10).
		return fmt.Sprintf("%s is installed but not logged in: %s (%s), then run doctor again.", n.product, b.APIKeyNote, n.login)
	case b.AuthStatus == "unauthenticated":
		return fmt.Sprintf("%s is installed but not logged in: log in to %s (%s), then run doctor again.", n.product, n.product, n.login)
	case b.VerifyError != nil:
		return fmt.Sprintf("%s is installed but its read-only profile did not verify: %s", n.product, b.VerifyError.Message)
	}
	return fmt.Sprintf("%s is installed but its read-only profile cannot be verified, so coagent8 does not use it by default.", n.product)
}

// dedupe drops repeated entries (a PATH that lists a directory twice),
// keeping the first occurrence and the order.
func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// pathVars names each backend's override variable (turn's executables).
var pathVars = map[string]string{"claude": "CLAUDE_PATH", "codex": "CODEX_PATH", "agy": "AGY_PATH"}

// withPathHint returns e, a CLI_NOT_FOUND of backend, with the way to
// point coagent8 at a CLI elsewhere (issue 18 item 5); any other e is
// returned as is. e itself is never modified.
func withPathHint(backend string, e *adapter.ProbeError) *adapter.ProbeError {
	v, ok := pathVars[backend]
	if e == nil || e.Reason != "cli.not_found" || !ok || strings.Contains(e.Message, process.PathHint(v)) {
		return e // the resolver's own message already says it
	}
	c := *e
	c.Message += "; " + process.PathHint(v)
	return &c
}

// tidyNotFound returns e with the repeats removed from a CLI_NOT_FOUND
// message's "searched:" list as well: the resolver lists a directory as
// often as PATH names it. A message in another form is returned as is; e
// itself is never modified (the backend may hold it).
func tidyNotFound(e *adapter.ProbeError) *adapter.ProbeError {
	if e == nil || e.Reason != "cli.not_found" {
		return e
	}
	head, list, ok := strings.Cut(e.Message, "; searched: ")
	if !ok {
		return e
	}
	c := *e
	c.Message = head + "; searched: " + strings.Join(dedupe(strings.Split(list, ", ")), ", ")
	return &c
}
