package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// MaxFileBytes bounds config.json (contract.md §8).
const MaxFileBytes = 64 << 10

// File is the validated configuration file (~/.coagent8/config.json,
// path from [Env.ConfigPath]). The zero value is not meaningful; use
// [LoadFile].
type File struct {
	// SchemaVersion is 1.
	SchemaVersion int
	// DefaultBackend is "", "codex", "claude", "agy" or "gemini" ("" =
	// JSON null or absent).
	DefaultBackend string
	// RoutingStrategy is "fixed" (default) or "smart_quota".
	RoutingStrategy string
	// AllowedBackends lists routing.allowedBackends; nil = all.
	AllowedBackends []string
	// ToolProfile is "canonical" (default) or "compact".
	ToolProfile string
	// Governance holds the user's model rules and price limits.
	// When GovernanceErr is non-nil it is the zero Rules, which asks for
	// every model; callers must refuse turns instead.
	Governance policy.Rules
	// Verify holds the user's review checks (issue 8); see [File.VerifyErr].
	Verify Verify
	// Delegate holds the user's delegate-job ceilings (issue 16); see
	// [File.DelegateErr].
	Delegate Delegate

	governanceErr     error
	defaultBackendErr error
	verifyErr         error
	delegateErr       error
	egress            json.RawMessage // the "egress" section, verbatim; nil = absent
	egressErr         error           // the file exists but could not be read as an object

	gateCredentials map[string]string // gate.credentials; nil = absent
	gateHops        map[string]string // gate.intermediaries; nil = absent
	gateErr         error
}

// GovernanceErr returns nil if the governance section is usable, else a
// POLICY_DENIED *fault.Error that every turn must return until the user
// fixes the file: reason config.invalid_json (details "line" and
// "column") when the file does not parse as JSON, config.missing when
// $COAGENT8_CONFIG names no file, config.literal_credential (detail "key",
// the path of the value, which is never quoted) when it holds a literal
// credential, else config.governance_invalid (detail "key").
// Tools still list: only turns are refused.
func (f File) GovernanceErr() error { return f.governanceErr }

// DefaultBackendErr returns nil unless defaultBackend holds something
// that is not a backend; then an INVALID_INPUT *fault.Error (reason
// config.default_backend_invalid) naming the known backends, which a turn
// that relies on the default must return rather than pick another
// backend silently (issue 19 item 11).
func (f File) DefaultBackendErr() error { return f.defaultBackendErr }

func defaultFile() File {
	return File{SchemaVersion: 1, RoutingStrategy: "fixed", ToolProfile: "canonical", Governance: policy.DefaultRules(),
		Delegate: defaultDelegate()}
}

// LoadFile reads and validates the configuration at path. It always returns
// a usable File: a missing file gives the defaults and no error. Any other
// problem is returned as an error for logs and doctor, and the affected keys
// keep their defaults — except governance, which is never defaulted: an
// unreadable or malformed file, or an invalid governance section, sets
// [File.GovernanceErr] so turns fail closed while the server stays up
// (AUD-P2-11, R-035). A file that is not JSON at all is refused with
// reason config.invalid_json naming the file by its base name only: without
// the home directory LoadFile cannot tell whether the full path would show
// it, which a refusal must not; [Env.Load] names the full path, home as ~.
func LoadFile(path string) (File, error) { return loadFile(path, filepath.Base(path)) }

// loadFile is [LoadFile] with shown, the path as a refusal may name it.
func loadFile(path, shown string) (File, error) {
	f := defaultFile()
	b, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f.unusable(err, governanceFault("config", "the configuration file cannot be used: "+publicCause(err), err))
	}
	top, err := decodeTop(b)
	var je *JSONError
	if errors.As(err, &je) {
		je.Path = path
		return f.unusable(je, invalidJSONFault(je, shown))
	}
	if err == nil && top == nil {
		err = errors.New("null")
	}
	if err != nil {
		err = fmt.Errorf("config: not a JSON object: %w", err)
		return f.unusable(err, governanceFault("config", "the configuration file cannot be used: "+publicCause(err), err))
	}
	var lit *fault.Error
	if errors.As(literalCredential(b), &lit) { // the whole file is refused
		return f.unusable(lit, literalFault(lit))
	}
	if raw, ok := top["egress"]; ok {
		f.egress = slices.Clone(raw)
	}
	return f, f.parse(top)
}

// unusable marks every section of f unusable because of err, with refusal
// as the error turns return, and returns f and err.
func (f File) unusable(err error, refusal *fault.Error) (File, error) {
	f.Governance = policy.Rules{}
	f.governanceErr = refusal
	f.egressErr, f.verifyErr, f.gateErr, f.delegateErr = err, err, err, err
	return f, err
}

func readConfig(path string) ([]byte, error) {
	// Stat first: opening a FIFO or a device would block or read forever,
	// and every turn re-reads this file.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("config file is not a regular file (%s)", st.Mode().Type())
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("config file larger than %d bytes", MaxFileBytes)
	}
	return b, nil
}

// parse fills f from the top-level object. A governance problem sets
// f.governanceErr and is also returned; problems with other keys only reset
// those keys.
func (f *File) parse(top map[string]json.RawMessage) error {
	var errs []error
	for _, step := range []func(map[string]json.RawMessage) error{f.parseBasics, f.parseRouting, f.parseGovernance, f.parseVerify, f.parseGate, f.parseDelegate} {
		errs = append(errs, step(top))
	}
	for _, typo := range misspelt(top) {
		// A misspelt section would otherwise be ignored: reported, and
		// for governance ("governence") fail closed, since the user's
		// rules would silently not apply.
		errs = append(errs, typo)
		if typo.meant == "governance" && f.governanceErr == nil {
			f.Governance = policy.Rules{}
			f.governanceErr = governanceFault(typo.Key, typo.Problem, typo)
		}
	}
	if err := schemaErr(top); err != nil {
		// Another schema's rules mean something this coagent8 cannot tell
		// (issue 19 item 13): refuse turns as for an invalid governance
		// section instead of applying the parts it happens to recognise.
		f.Governance = policy.Rules{}
		f.governanceErr = governanceFault("schemaVersion", "must be 1 (this coagent8 reads schema version 1 only)", err)
	}
	return errors.Join(errs...)
}

// topKeys are the keys of the file's top-level object this coagent8 reads.
var topKeys = []string{"schemaVersion", "defaultBackend", "toolProfile", "routing", "governance", "verify", "gate", "delegate", "egress"}

// typoError is a top-level key that is not one of topKeys but is within
// [maxEdits] of one (or differs in case only): meant is that key.
type typoError struct {
	*KeyError
	meant string
}

func (e typoError) Unwrap() error { return e.KeyError }

// misspelt returns the top-level keys that look like a misspelling of a
// known one, in sorted order. Other unknown keys are kept and ignored, as
// they always were (another tool's settings in a shared file).
func misspelt(top map[string]json.RawMessage) []typoError {
	var out []typoError
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if slices.Contains(topKeys, k) {
			continue
		}
		for _, known := range topKeys {
			if strings.EqualFold(k, known) || levenshtein.ComputeDistance(strings.ToLower(k), strings.ToLower(known)) <= maxEdits(known) {
				out = append(out, typoError{&KeyError{Key: k, Problem: fmt.Sprintf("unknown top-level key: did you mean %q?", known)}, known})
				break
			}
		}
	}
	return out
}

// maxEdits is how far a key may be from known to be taken for its
// misspelling: one edit for a short key ("gate": "data" is another word),
// two for a longer one.
func maxEdits(known string) int {
	if len(known) < 6 {
		return 1
	}
	return 2
}

// schemaErr reports a schemaVersion other than 1; an absent one is 1.
func schemaErr(top map[string]json.RawMessage) error {
	raw, ok := top["schemaVersion"]
	if !ok {
		return nil
	}
	// json.Number would also take the string "1": only the number 1 is.
	var n json.Number
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '"' || strictUnmarshal(raw, &n) != nil || n.String() != "1" {
		return keyErr("schemaVersion", "must be 1")
	}
	return nil
}

// strictUnmarshal decodes one JSON value with numbers kept as json.Number
// and no trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func (f *File) parseBasics(top map[string]json.RawMessage) error {
	// smart_quota is a routing.strategy, not a backend a turn can run on:
	// the check listed it here and the turn then refused it as unknown
	// (issue 18 item 6).
	backendErr := enumKey(top, "defaultBackend", &f.DefaultBackend, true, "codex", "claude", "agy", "gemini")
	if backendErr != nil {
		var v any
		_ = json.Unmarshal(top["defaultBackend"], &v) // shown quoted and clipped, whatever it is
		f.defaultBackendErr = fault.Wrap(fault.InvalidInput, "config.default_backend_invalid",
			fmt.Sprintf("defaultBackend %s in the coagent8 configuration is not a known backend: use claude, codex or agy (or gemini, agy's old name), or remove it", clipValue(v)),
			backendErr).With("key", "defaultBackend")
	}
	return errors.Join(schemaErr(top), backendErr,
		enumKey(top, "toolProfile", &f.ToolProfile, false, "canonical", "compact"))
}

// enumKey sets *dst from top[key] if it is one of allowed (or null when
// nullable); otherwise *dst keeps its default and an error names the key.
func enumKey(top map[string]json.RawMessage, key string, dst *string, nullable bool, allowed ...string) error {
	raw, ok := top[key]
	if !ok || (nullable && string(bytes.TrimSpace(raw)) == "null") {
		return nil
	}
	var s string
	if strictUnmarshal(raw, &s) != nil || !slices.Contains(allowed, s) {
		return keyErr(key, fmt.Sprintf("must be one of %v", allowed))
	}
	*dst = s
	return nil
}

func (f *File) parseRouting(top map[string]json.RawMessage) error {
	raw, ok := top["routing"]
	if !ok {
		return nil
	}
	var r map[string]json.RawMessage
	if strictUnmarshal(raw, &r) != nil {
		return keyErr("routing", "must be an object")
	}
	err := enumKey(r, "strategy", &f.RoutingStrategy, false, "fixed", "smart_quota")
	if raw, ok := r["allowedBackends"]; ok {
		var list []string
		if strictUnmarshal(raw, &list) != nil || !allIn(list, "codex", "claude", "agy", "gemini") {
			return errors.Join(err, keyErr("routing.allowedBackends", "must be a list of codex, claude, agy, gemini"))
		}
		f.AllowedBackends = list
	}
	if err != nil {
		return fmt.Errorf("routing.%w", err)
	}
	return nil
}

func allIn(list []string, allowed ...string) bool {
	for _, s := range list {
		if !slices.Contains(allowed, s) {
			return false
		}
	}
	return true
}

// KeyError names the configuration key whose value is invalid.
type KeyError struct {
	Key     string
	Problem string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Problem }

func keyErr(key, problem string) error { return &KeyError{Key: key, Problem: problem} }

// governanceFault builds the POLICY_DENIED error that refuses turns while
// the governance section is unusable.
func governanceFault(key, problem string, cause error) *fault.Error {
	return fault.Wrap(fault.PolicyDenied, "config.governance_invalid",
		fmt.Sprintf("turns are refused until the configuration is fixed: %s: %s", key, problem), cause).With("key", key)
}

// Egress returns the "egress" section of the file verbatim, for
// egress.ParseConfig (which validates it strictly), or nil when the file
// or the section is absent — the caller then applies the built-in policy.
// It returns an error, and no section, when the file exists but cannot be
// read as a JSON object: the user's egress policy is then unknown and the
// provider gate must not start (fail closed). The slice is a copy.
func (f File) Egress() (json.RawMessage, error) {
	if f.egressErr != nil {
		return nil, f.egressErr
	}
	return slices.Clone(f.egress), nil
}
