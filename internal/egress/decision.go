package egress

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// Effect is a decision's result.
type Effect uint8

// Effects. The zero value is not an allow: absence of a decision denies
//
const (
	Deny Effect = iota + 1
	Allow
)

// String returns "deny" or "allow".
func (e Effect) String() string {
	switch e {
	case Deny:
		return "deny"
	case Allow:
		return "allow"
	}
	panic("egress: unknown Effect")
}

// Decision is one egress decision: restricted, local-only,
// single-use evidence. Every field is a digest, an opaque id, an enum, a
// number or a time; it has no exported field and refuses to be
// marshaled. Only [Decider] builds one.
type Decision struct {
	id           [16]byte
	principal    [32]byte
	job          [32]byte
	transmission uint64
	purpose      Purpose
	kind         TargetKind
	target       [32]byte
	wire         [32]byte
	request      [32]byte // the complete request: method, target, headers, body
	influence    [32]byte
	policy       [32]byte
	basis        Basis
	expires      time.Time
	leftUses     int64
	leftBytes    int64
	effect       Effect
	reason       string
	custody      string // the custody route's record ("custody=gate>…>origin"); bound via target
	spent        atomic.Bool
}

// ErrMarshal is returned by every marshaling method of [Decision].
var ErrMarshal = errors.New("egress decision is local-only evidence and cannot be marshaled")

func newID() (id [16]byte) {
	rand.Read(id[:])
	return id
}

// String returns an opaque id only.
func (d *Decision) String() string { return "egress.Decision(" + hex.EncodeToString(d.id[:8]) + ")" }

// GoString is [Decision.String].
func (d *Decision) GoString() string { return d.String() }

// MarshalJSON refuses: decisions never enter payloads or logs.
func (d *Decision) MarshalJSON() ([]byte, error) { return nil, ErrMarshal }

// MarshalText refuses, like MarshalJSON.
func (d *Decision) MarshalText() ([]byte, error) { return nil, ErrMarshal }

// Effect returns the decision's result.
func (d *Decision) Effect() Effect { return d.effect }

// Reason returns the decision's reason ("egress.raw", "egress.filtered",
// or the refusal reason).
func (d *Decision) Reason() string { return d.reason }

// Basis returns the disclosure basis (nil on a denial).
func (d *Decision) Basis() Basis { return d.basis }

// Expires returns when the decision stops admitting a send.
func (d *Decision) Expires() time.Time { return d.expires }

// evidence is the canonical restricted encoding the EvidenceDigest@1 is
// computed over.
func (d *Decision) evidence() []byte {
	h := sha256.New()
	for _, b := range [][]byte{d.id[:], d.principal[:], d.job[:], d.target[:], d.wire[:], d.request[:], d.influence[:], d.policy[:]} {
		h.Write(b)
	}
	h.Write([]byte(d.purpose))
	h.Write([]byte(d.reason))
	return h.Sum(nil)
}

// verify checks the decision against what is about to be sent (R-135,
// The returned fault carries the refusal reason.
func (d *Decision) verify(wire []byte, x Transmission, policy [32]byte, now time.Time) error {
	deny := func(reason, msg string) error { return fault.New(fault.PolicyDenied, reason, msg) }
	t, purpose := x.Target, x.Purpose
	body := sha256.Sum256(wire)
	switch {
	case d.effect != Allow:
		return deny(d.reason, "egress refused")
	case t == nil || t.Kind() != d.kind || targetDigest(t) != d.target:
		return deny(ReasonTargetMismatch, "egress decision is for another target")
	case body != d.wire || requestDigest(x, body) != d.request:
		return deny(ReasonWireMismatch, "request bytes, method or headers changed after the egress decision")
	case purpose != d.purpose:
		return deny(ReasonPurposeMismatch, "egress decision is for another purpose")
	case policy != d.policy:
		return deny(ReasonPolicyChanged, "egress policy changed after the decision")
	case !now.Before(d.expires):
		return deny(ReasonExpired, "egress decision expired")
	}
	if f, ok := d.basis.(FilterEvidence); ok && (!f.complete() || !now.Before(f.expires) || f.candidate != d.wire) {
		return deny(ReasonFilterExpired, "privacy filter evidence incomplete or expired")
	}
	return nil
}
