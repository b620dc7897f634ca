package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// ConfigExplicit reports whether the configuration path was named by
// $COAGENT8_CONFIG (or coagent8_CONFIG) rather than defaulted: a named
// file that does not exist is a mistake, not "no configuration".
func (e Env) ConfigExplicit() bool {
	return e.vars["COAGENT8_CONFIG"] != "" || e.vars["coagent8_CONFIG"] != ""
}

// Load reads the configuration at [Env.ConfigPath] as [LoadFile] does
// (a refusal names the file with the home directory as ~), except that a file named by $COAGENT8_CONFIG must exist: when it does
// not, turns are refused ([File.GovernanceErr] is POLICY_DENIED
// config.missing naming the path, home shown as ~) and the error says so,
// instead of silently running on the defaults (issue 19 item 13).
func (e Env) Load() (File, error) {
	path := e.ConfigPath()
	f, err := loadFile(path, DisplayPath(e.Home(), path))
	if err != nil || !e.ConfigExplicit() {
		return f, err
	}
	if _, statErr := readConfig(path); errors.Is(statErr, fs.ErrNotExist) {
		err = fmt.Errorf("COAGENT8_CONFIG names %s, which does not exist", path)
		f.Governance = policy.Rules{}
		f.governanceErr = fault.Wrap(fault.PolicyDenied, "config.missing",
			"turns are refused: COAGENT8_CONFIG names "+DisplayPath(e.Home(), path)+
				", which does not exist; create it (`coagent8 governance allow MODEL` writes it) or unset COAGENT8_CONFIG", err).
			With("key", "COAGENT8_CONFIG")
		f.egressErr, f.verifyErr, f.gateErr = err, err, err
	}
	return f, err
}

// DisplayPath returns path with the home directory shown as ~, for
// messages that must not carry absolute home paths.
func DisplayPath(home, path string) string {
	if home == "" || home == "/" {
		return path
	}
	if rel, err := filepath.Rel(home, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Join("~", rel)
	}
	return path
}

// publicCause renders why the file could not be used, for the message
// every turn returns: a file-system error without its path (which may be
// under the home directory), anything else bounded and with credential
// formats redacted. A file that is not JSON is not for it: see
// invalidJSONFault, which gives the line and column.
func publicCause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Message // already public (literal credentials redacted)
	}
	s := strings.TrimPrefix(answerFormats.String(err.Error()), "config: ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

// clipValue renders a configuration value for a message: JSON, at most 40
// characters, credential formats redacted.
func clipValue(v any) string {
	b, _ := json.Marshal(v)
	s := answerFormats.String(string(b))
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return s
}
