package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Bounds of the verify section (issue 8: "bounded counts and lengths").
const (
	MaxVerifyCommands = 16
	maxVerifyArgs     = 64
	maxVerifyArgLen   = 1024
	maxVerifyReadOnly = 16
	maxVerifyPathLen  = 4096
	maxVerifyTimeout  = 2 * 60 * 60 // seconds
	minVerifyMemMiB   = 64
	maxVerifyMemMiB   = 64 << 10
)

// Verify is the validated "verify" section: the checks the user wants the
// review tool to run in the task sandbox (issue 8). Only the user's file
// names commands; no tool argument can add, change or select one.
//
// Commands hold argv exactly as written until [Verify.Resolve] replaces
// each argv[0] by a canonical absolute path. Zero Timeout and MemoryMiB
// mean the verifier's defaults.
type Verify struct {
	// Commands are argv arrays; argv[0] is an absolute path or a bare
	// program name (letters, digits, ".", "_", "+", "-").
	Commands [][]string
	// Timeout is verify.timeoutSeconds (1..7200 s) per command.
	Timeout time.Duration
	// MemoryMiB is verify.memoryMiB (64..65536) per command.
	MemoryMiB int64
	// ReadOnly lists extra absolute host paths bound read-only into the
	// sandbox (verify.readOnly, e.g. a toolchain outside /usr).
	ReadOnly []string
}

// VerifyErr returns nil if the verify section is usable (or absent), else
// a *KeyError naming the offending key; the review then runs without
// checks and says why. An unreadable or malformed file is also reported
// here.
func (f File) VerifyErr() error { return f.verifyErr }

// bareProgram reports whether p matches ^[A-Za-z0-9][A-Za-z0-9._+-]*$ (a
// program name for PATH lookup, no path separator or leading dash).
// Checked by hand: a regexp in a package variable compiles at every
// process start (issue 8 performance); verify_name_test.go checks the
// equivalence.
func bareProgram(p string) bool {
	if p == "" || !alnum(p[0]) {
		return false
	}
	for i := 1; i < len(p); i++ {
		if !alnum(p[i]) && strings.IndexByte("._+-", p[i]) < 0 {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// parseVerify validates the verify section strictly: unknown keys, wrong
// types and out-of-range values are errors naming the key, and nothing
// from an invalid section is kept.
func (f *File) parseVerify(top map[string]json.RawMessage) error {
	raw, ok := top["verify"]
	if !ok {
		return nil
	}
	v, err := parseVerifySection(raw)
	if err != nil {
		f.verifyErr = err
		return err
	}
	f.Verify = v
	return nil
}

func parseVerifySection(raw json.RawMessage) (Verify, error) {
	var m map[string]json.RawMessage
	if strictUnmarshal(raw, &m) != nil || m == nil {
		return Verify{}, keyErr("verify", "must be an object")
	}
	var v Verify
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var err error
		switch k {
		case "commands":
			v.Commands, err = parseCommands(m[k])
		case "timeoutSeconds":
			var n int64
			n, err = boundedInt("verify.timeoutSeconds", m[k], 1, maxVerifyTimeout)
			v.Timeout = time.Duration(n) * time.Second
		case "memoryMiB":
			v.MemoryMiB, err = boundedInt("verify.memoryMiB", m[k], minVerifyMemMiB, maxVerifyMemMiB)
		case "readOnly":
			v.ReadOnly, err = parseReadOnly(m[k])
		default:
			err = keyErr("verify."+k, "unknown key (allowed: commands, timeoutSeconds, memoryMiB, readOnly)")
		}
		if err != nil {
			return Verify{}, err
		}
	}
	return v, nil
}

func parseCommands(raw json.RawMessage) ([][]string, error) {
	var cmds [][]string
	if strictUnmarshal(raw, &cmds) != nil {
		return nil, keyErr("verify.commands", "must be a list of argv arrays of strings, e.g. [[\"go\",\"test\",\"./...\"]]")
	}
	if len(cmds) > MaxVerifyCommands {
		return nil, keyErr("verify.commands", fmt.Sprintf("at most %d commands", MaxVerifyCommands))
	}
	for i, argv := range cmds {
		if err := checkArgv(argv); err != nil {
			return nil, keyErr(fmt.Sprintf("verify.commands[%d]", i), err.Error())
		}
	}
	return cmds, nil
}

func checkArgv(argv []string) error {
	if len(argv) == 0 || len(argv) > maxVerifyArgs {
		return fmt.Errorf("must hold 1 to %d strings", maxVerifyArgs)
	}
	for _, a := range argv {
		if len(a) > maxVerifyArgLen || hasControlByte(a) {
			return fmt.Errorf("arguments must be at most %d bytes without control characters", maxVerifyArgLen)
		}
	}
	if p := argv[0]; !bareProgram(p) && !canonicalAbs(p) {
		return errors.New("the program must be a bare name (looked up in PATH) or a clean absolute path")
	}
	return nil
}

func parseReadOnly(raw json.RawMessage) ([]string, error) {
	var list []string
	if strictUnmarshal(raw, &list) != nil || len(list) > maxVerifyReadOnly {
		return nil, keyErr("verify.readOnly", fmt.Sprintf("must be a list of at most %d absolute paths", maxVerifyReadOnly))
	}
	for i, p := range list {
		if !canonicalAbs(p) || p == "/" {
			return nil, keyErr(fmt.Sprintf("verify.readOnly[%d]", i), "must be a clean absolute path other than /")
		}
	}
	return list, nil
}

func boundedInt(key string, raw json.RawMessage, lo, hi int64) (int64, error) {
	var n json.Number
	if strictUnmarshal(raw, &n) != nil {
		return 0, keyErr(key, "must be a number")
	}
	v, err := n.Int64()
	if err != nil || v < lo || v > hi {
		return 0, keyErr(key, fmt.Sprintf("must be an integer in [%d, %d]", lo, hi))
	}
	return v, nil
}

func canonicalAbs(p string) bool {
	return len(p) <= maxVerifyPathLen && strings.HasPrefix(p, "/") && filepath.Clean(p) == p && !hasControlByte(p)
}

func hasControlByte(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// Resolve returns a copy of v whose every argv[0] is the canonical absolute
// path of an existing regular executable file: a bare name is looked up in
// env's PATH (absolute entries only, no shell), and any path is resolved
// through symlinks (the task sandbox runs only canonical paths). The error
// is a *KeyError naming the command.
func (v Verify) Resolve(env Env) (Verify, error) {
	out := v
	out.Commands = make([][]string, len(v.Commands))
	for i, argv := range v.Commands {
		p, err := resolveProgram(argv[0], env.Get("PATH"))
		if err != nil {
			return Verify{}, keyErr(fmt.Sprintf("verify.commands[%d][0]", i), err.Error())
		}
		out.Commands[i] = append([]string{p}, argv[1:]...)
	}
	out.ReadOnly = slices.Clone(v.ReadOnly)
	return out, nil
}

func resolveProgram(name, path string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return canonicalExecutable(name)
	}
	for _, dir := range filepath.SplitList(path) {
		// Relative PATH entries would resolve against coagent8's working
		// directory, which a workspace could control: skip them.
		if !filepath.IsAbs(dir) {
			continue
		}
		if p, err := canonicalExecutable(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not an executable in PATH", name)
}

func canonicalExecutable(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%q does not exist", p)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%q is not a regular executable file", p)
	}
	return real, nil
}
