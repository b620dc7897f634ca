package turn

import (
	"os"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// executables maps backend ids to their CLI names and override variables
// (backends.md §0).
var executables = map[string][]string{
	"claude": {"claude", "CLAUDE_PATH"},
	"codex":  {"codex", "CODEX_PATH"},
	"agy":    {"agy", "AGY_PATH", "GEMINI_PATH"},
}

// Installed reports whether the backend's CLI resolves (no subprocess).
func Installed(env config.Env, backend string) bool {
	ok, _ := installed(env, backend)
	return ok
}

// installed reports whether the backend's CLI resolves, and the places
// searched (an override as NAME=value) when it does not.
func installed(env config.Env, backend string) (bool, []string) {
	e, ok := executables[backend]
	if !ok {
		return false, nil
	}
	_, searched, err := process.Resolve(env, e[0], e[1:]...)
	return err == nil, searched
}

// noneInstalled is the CLI_NOT_FOUND of a turn that names no backend when
// no backend CLI resolves: the places searched per backend in the message
// (at most [maxSearched] each), all of them in detail "searched" (joined
// by the OS path-list separator, as a named backend's refusal).
func noneInstalled(backends []string, searched map[string][]string) error {
	var per, all []string
	for _, b := range backends {
		s := searched[b]
		all = append(all, s...)
		switch {
		case len(s) == 0: // no override set, and PATH empty or all relative (never searched)
			s = []string{"nowhere (PATH names no absolute directory)"}
		case len(s) > maxSearched:
			s = append(s[:maxSearched:maxSearched], "…")
		}
		per = append(per, b+": "+strings.Join(s, ", "))
	}
	return fault.New(fault.CLINotFound, "backend.none_installed",
		"No backend CLI is installed: install Claude Code, Codex or agy, or set CLAUDE_PATH / CODEX_PATH / AGY_PATH. Searched: "+
			strings.Join(per, "; ")+".").With("searched", strings.Join(all, string(os.PathListSeparator)))
}

// maxSearched bounds the places a message lists per backend (a long PATH).
const maxSearched = 12

// ResolveBackend maps the caller's backend argument to a configured
// backend: "gemini" is agy's old name; "" and "auto" pick preferred (the
// user's configured default) if set, else the only installed backend,
// else ONBOARDING_REQUIRED when several are installed.
func ResolveBackend(env config.Env, requested, preferred string, r *Runner) (string, error) {
	switch requested = strings.ToLower(requested); requested {
	case "gemini":
		return "agy", nil
	case "", "auto":
	default:
		return requested, nil
	}
	if preferred != "" && preferred != "auto" {
		return ResolveBackend(env, preferred, "", r)
	}
	var found, names []string
	searched := map[string][]string{}
	for _, b := range r.Backends() {
		ok, s := installed(env, b.Name())
		if ok {
			found = append(found, b.Name())
		}
		names, searched[b.Name()] = append(names, b.Name()), s
	}
	switch len(found) {
	case 0:
		return "", noneInstalled(names, searched)
	case 1:
		return found[0], nil
	}
	return "", fault.New(fault.OnboardingRequired, "backend.ambiguous",
		"Several backends are installed ("+strings.Join(found, ", ")+"): name one (the backend argument; --backend in a terminal), "+
			"or set defaultBackend in "+config.DisplayPath(env.Home(), env.ConfigPath())+".")
}

// Failure builds the Outcome of a request that failed before Run.
func (r *Runner) Failure(req Request, err error) Outcome {
	return r.failed(req, err, time.Now())
}

// Refused is [Runner.Failure] for an error whose security event the
// caller has already recorded (a governance or consent refusal): it
// builds the same Outcome and records nothing, so one refusal is one
// event (issue 19 item 4).
func (r *Runner) Refused(req Request, err error) Outcome {
	return r.outcome(req, err, time.Now())
}

// Precheck runs every check that needs no process (nested-turn marker,
// backend, workspace, prompt, model and effort), so callers can refuse
// before governance probes start anything.
func (r *Runner) Precheck(req Request) error {
	_, _, err := r.admit(req)
	return err
}
