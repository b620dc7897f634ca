// Package config is the only place coagent8 reads its environment and its
// configuration file. Everything else receives values from here.
//
// # Environment
//
// [Env] is a snapshot of the process environment taken once at start; child
// processes get an environment built from an allowlist of it, never the
// snapshot itself.
//
// No variable read here weakens a verification: the variables only
// locate files and executables.
package config

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// Env is an immutable snapshot of environment variables.
type Env struct {
	vars map[string]string
}

// FromOS snapshots the current process environment.
func FromOS() Env { return FromList(os.Environ()) }

// FromList builds an Env from KEY=VALUE entries (later entries win).
func FromList(list []string) Env {
	m := make(map[string]string, len(list))
	for _, kv := range list {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return Env{vars: m}
}

// Get returns the value of key, or "".
func (e Env) Get(key string) string { return e.vars[key] }

// Lookup returns the value of key and whether it is set.
func (e Env) Lookup(key string) (string, bool) { v, ok := e.vars[key]; return v, ok }

// With returns a copy of e with key set to value.
func (e Env) With(key, value string) Env {
	m := make(map[string]string, len(e.vars)+1)
	for k, v := range e.vars {
		m[k] = v
	}
	m[key] = value
	return Env{vars: m}
}

// Home returns the user's home directory ($HOME, else the OS answer).
func (e Env) Home() string {
	if h := e.vars["HOME"]; h != "" {
		return h
	}
	if h := e.vars["USERPROFILE"]; h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// StateDir returns coagent8's data directory: $COAGENT8_DIR (also the
// original's literal coagent8_DIR), else ~/.coagent8. It is not created here.
func (e Env) StateDir() string {
	for _, k := range []string{"COAGENT8_DIR", "coagent8_DIR"} {
		if v := e.vars[k]; v != "" {
			return filepath.Clean(v)
		}
	}
	return filepath.Join(e.Home(), ".coagent8")
}

// ConfigPath returns the configuration file path: $COAGENT8_CONFIG (also
// coagent8_CONFIG), else <StateDir>/config.json.
func (e Env) ConfigPath() string {
	for _, k := range []string{"COAGENT8_CONFIG", "coagent8_CONFIG"} {
		if v := e.vars[k]; v != "" {
			return filepath.Clean(v)
		}
	}
	return filepath.Join(e.StateDir(), "config.json")
}

// PathErr refuses a COAGENT8_DIR or COAGENT8_CONFIG (or the original's
// lower-case spellings) that is not an absolute path: taken from whatever
// the current directory is, each command and each host-started server
// would read another state directory or configuration. The error is
// INVALID_INPUT config.relative_path naming the variable (detail "var").
func (e Env) PathErr() error {
	for _, k := range []string{"COAGENT8_DIR", "coagent8_DIR", "COAGENT8_CONFIG", "coagent8_CONFIG"} {
		if v := e.vars[k]; v != "" && !filepath.IsAbs(v) {
			return fault.New(fault.InvalidInput, "config.relative_path",
				k+" must be an absolute path: it would be taken from the current directory").With("var", k)
		}
	}
	return nil
}

// NestedTurnVar is set in every backend process's environment; a coagent8
// that finds it set refuses turns with COAGENT8_NESTED_TURN.
const NestedTurnVar = "COAGENT8_TURN"

// InTurn reports whether this process was started inside a coagent8 turn.
func (e Env) InTurn() bool { return e.vars[NestedTurnVar] != "" }

// KeysWithPrefix returns the names of set variables starting with prefix.
func (e Env) KeysWithPrefix(prefix string) []string {
	var out []string
	for k := range e.vars {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}
