package egress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// DiagnosticRecorder is closed-diagnostic-recording@1: the
// offline witness of the disclosure-accounting primitive. It admits only
// the complete canonical JSON bytes of a diagnostic report, claims one use
// and their full size from the [DiagnosticRecording] account, and records
// exactly those bytes in a host-pinned directory. It has no network
// transport, callback or caller-chosen destination:
// it is not evidence of remote-disclosure safety or anonymization.
type DiagnosticRecorder struct {
	d   *Decider
	dir string
}

// NewDiagnosticRecorder pins the recording directory dir (absolute,
// created 0700) for decider d.
func NewDiagnosticRecorder(d *Decider, dir string) (*DiagnosticRecorder, error) {
	if d == nil || !filepath.IsAbs(dir) {
		return nil, fault.New(fault.InvalidInput, "egress.diagnostic", "diagnostic recorder needs a decider and an absolute directory")
	}
	return &DiagnosticRecorder{d: d, dir: filepath.Clean(dir)}, nil
}

// Activation is the process-local, single-use authority to record one
// claimed candidate. A copy shares its use: only one Record succeeds.
type Activation struct {
	r       *DiagnosticRecorder
	digest  [32]byte
	policy  [32]byte
	expires time.Time
	used    *atomic.Bool
}

// Claim admits candidate — refused unless it is canonical JSON (compact,
// keys sorted, as encoding/json re-encodes it) — and consumes one use and
// len(candidate) bytes. The claim is never refunded.
func (r *DiagnosticRecorder) Claim(ctx context.Context, candidate []byte) (Activation, error) {
	deny := func(reason, msg string) (Activation, error) {
		return Activation{}, fault.New(fault.PolicyDenied, reason, msg)
	}
	if !canonical(candidate) {
		return deny("egress.diagnostic_noncanonical", "diagnostic candidate is not complete canonical JSON")
	}
	st, now := r.d.cur.Load(), r.d.opts.Now()
	pc, ok := st.p.purposes[DiagnosticRecording]
	if !ok {
		return deny(ReasonPurpose, "no capacity configured for "+string(DiagnosticRecording))
	}
	sum := sha256.Sum256(candidate)
	ev := r.d.opts.Key.Digest(evidenceDomain(DiagnosticRecording, "egress.diagnostic"), sum[:])
	err := r.d.opts.Ledger.Claim(ctx, string(DiagnosticRecording), Ceiling{Uses: pc.MaxUses, Bytes: pc.MaxBytes},
		int64(len(candidate)), Record{Reason: "egress.diagnostic_claim", Evidence: ev})
	if err != nil {
		reason := claimReason(err)
		return deny(reason, "diagnostic recording refused ("+reason+")")
	}
	return Activation{r: r, digest: sum, policy: st.p.revision, expires: now.Add(st.p.ttl), used: new(atomic.Bool)}, nil
}

// Record consumes the activation and writes exactly candidate (0600) to
// the pinned directory, after rechecking the bytes, current policy and
// expiry with no blocking step between the last check and the write
// . It returns the file path.
func (a Activation) Record(candidate []byte) (string, error) {
	if a.used == nil || !a.used.CompareAndSwap(false, true) {
		return "", fault.New(fault.PolicyDenied, ReasonSpent, "activation already used or invalid")
	}
	switch {
	case sha256.Sum256(candidate) != a.digest:
		return "", fault.New(fault.PolicyDenied, ReasonWireMismatch, "candidate changed after the claim")
	case a.r.d.cur.Load().p.revision != a.policy:
		return "", fault.New(fault.PolicyDenied, ReasonPolicyChanged, "policy changed after the claim")
	case !a.r.d.opts.Now().Before(a.expires):
		return "", fault.New(fault.PolicyDenied, ReasonExpired, "activation expired")
	}
	if err := os.MkdirAll(a.r.dir, 0o700); err != nil {
		return "", fmt.Errorf("diagnostic recorder: %w", err)
	}
	path := filepath.Join(a.r.dir, "diagnostic-"+hex.EncodeToString(a.digest[:8])+".json")
	if err := os.WriteFile(path, candidate, 0o600); err != nil {
		return "", fmt.Errorf("diagnostic recorder: %w", err)
	}
	return path, nil
}

// canonical reports whether b is exactly encoding/json's compact,
// key-sorted encoding of the value it holds.
func canonical(b []byte) bool {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	again, err := json.Marshal(v)
	return err == nil && bytes.Equal(again, b)
}
