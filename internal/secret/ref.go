package secret

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/config"
)

// Ref is a reference to a secret: "env:NAME" (an environment variable of
// the resolving process) or "file:/abs/path" (the whole file, one trailing
// newline trimmed). It holds no secret and is safe to store and print.
type Ref struct {
	kind string // "env" or "file"
	name string
}

// ErrLiteral reports a reference that is a literal secret value instead of
// a reference.
var ErrLiteral = errors.New("secret reference must be env:NAME or file:/path, not a literal value")

// envName reports whether s matches ^[A-Za-z_][A-Za-z0-9_]{0,127}$. It is
// checked by hand because compiling that bounded repetition in a package
// variable costs every coagent8 process start (issue 8 performance);
// ref_test.go checks it against the pattern.
func envName(s string) bool {
	if s == "" || len(s) > 128 || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ParseRef parses s. It returns [ErrLiteral] for anything that is not a
// well-formed reference; the error never quotes s, which may be a secret.
func ParseRef(s string) (Ref, error) {
	kind, name, ok := strings.Cut(s, ":")
	switch {
	case ok && kind == "env" && envName(name):
		return Ref{kind: kind, name: name}, nil
	case ok && kind == "file" && filepath.IsAbs(name) && filepath.Clean(name) == name:
		return Ref{kind: kind, name: name}, nil
	}
	return Ref{}, ErrLiteral
}

// String returns the reference in its parseable form.
func (r Ref) String() string {
	if r.kind == "" {
		return ""
	}
	return r.kind + ":" + r.name
}

// IsZero reports whether r is the zero Ref.
func (r Ref) IsZero() bool { return r.kind == "" }

// Resolver resolves references against one environment snapshot and the
// file system. The zero value resolves env references to "unset".
type Resolver struct {
	Env config.Env
}

// BindingError reports a reference that could not be resolved. Its message
// names the reference, never a value.
type BindingError struct {
	Ref Ref
	Err error
}

func (e *BindingError) Error() string { return fmt.Sprintf("resolve secret %s: %v", e.Ref, e.Err) }

// Cause returns why err, from [Resolver.Resolve], could not resolve its
// reference: one of the fixed phrases of a *[BindingError] ("empty or
// unset", "not a regular file (…)", "file larger than 64 KiB …"), which
// never hold a value; "unreadable" for any other error.
func Cause(err error) string {
	var be *BindingError
	if errors.As(err, &be) && be.Err != nil {
		return be.Err.Error()
	}
	return "unreadable"
}
func (e *BindingError) Unwrap() error { return e.Err }

// Resolve returns the secret r names. An unset or empty variable, or an
// empty file or one [ReadFile] refuses, is a *[BindingError].
func (res Resolver) Resolve(r Ref) (Value, error) {
	var s string
	switch r.kind {
	case "env":
		s = res.Env.Get(r.name)
	case "file":
		b, err := ReadFile(r, r.name)
		if err != nil {
			return Value{}, err
		}
		s = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	default:
		return Value{}, &BindingError{Ref: r, Err: errors.New("empty reference")}
	}
	if s == "" {
		return Value{}, &BindingError{Ref: r, Err: errors.New("empty or unset")}
	}
	return New(s), nil
}
