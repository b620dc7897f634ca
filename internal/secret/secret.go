// Package secret holds credential values that redact themselves, and the
// references (never the values) that configuration stores.
//
// # Security model
//
// A [Value] prints as a placeholder through every formatting path Go offers
// (fmt verbs, JSON, text marshalling, slog); the plaintext is reachable only
// through [Value.Reveal], so each place that handles the plaintext is
// greppable. Values compare in constant time ([Value.Equal]).
//
// A [Ref] names where a secret lives ("env:NAME" or "file:/abs/path"); it is
// safe to store, print and log. [Resolver] turns a Ref into a Value at the
// moment of use.
package secret

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
)

// Placeholder is what a [Value] prints as.
const Placeholder = "[secret]"

// Value is a secret credential. The zero value is an empty secret. Values
// are not comparable with ==; use [Value.Equal].
//
// The plaintext sits behind a pointer: fmt cannot call the methods of an
// unexported field, and printed a Value held in one (the gate's
// admission holds the real credential so) field by field, the secret as
// decimal bytes; a pointer below the top level it prints as an address
// only.
type Value struct {
	_ [0]func() // incomparable: == would not be constant time
	p *[]byte   // nil = empty; never written after New
}

// New returns a Value holding a copy of s.
func New(s string) Value {
	b := []byte(s)
	return Value{p: &b}
}

// bytes returns the plaintext bytes (nil for the zero Value).
func (v Value) bytes() []byte {
	if v.p == nil {
		return nil
	}
	return *v.p
}

// Reveal returns the plaintext. Call it only where the credential leaves the
// process on its intended path (e.g. the upstream request header).
func (v Value) Reveal() string { return string(v.bytes()) }

// IsZero reports whether v holds no secret.
func (v Value) IsZero() bool { return len(v.bytes()) == 0 }

// Equal reports whether v and w hold the same secret, in time independent
// of their contents (for equal lengths).
func (v Value) Equal(w Value) bool { return subtle.ConstantTimeCompare(v.bytes(), w.bytes()) == 1 }

// String returns [Placeholder].
func (v Value) String() string { return Placeholder }

// GoString returns [Placeholder].
func (v Value) GoString() string { return Placeholder }

// Format prints [Placeholder] for every verb.
func (v Value) Format(f fmt.State, _ rune) { f.Write([]byte(Placeholder)) }

// MarshalJSON encodes [Placeholder] as a JSON string.
func (v Value) MarshalJSON() ([]byte, error) { return []byte(`"` + Placeholder + `"`), nil }

// MarshalText returns [Placeholder].
func (v Value) MarshalText() ([]byte, error) { return []byte(Placeholder), nil }

// LogValue makes slog print [Placeholder].
func (v Value) LogValue() slog.Value { return slog.StringValue(Placeholder) }
