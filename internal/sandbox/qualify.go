package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// Qualification is the record of one qualification run: the containment
// probes executed inside the sandbox by this exact binary on this kernel
// under this policy (issue 8 scope 6, R-200).
type Qualification struct {
	BinaryDigest string `json:"binary_digest"`
	// BinaryKey identifies the binary file (device, inode, size, mtime,
	// ctime) so a later process can reuse BinaryDigest without rehashing;
	// any write to the file changes ctime and so the key.
	BinaryKey     string        `json:"binary_key"`
	KernelRelease string        `json:"kernel_release"`
	LandlockABI   int           `json:"landlock_abi"`
	PolicyDigest  string        `json:"policy_digest"`
	Time          time.Time     `json:"time"`
	Probes        []ProbeResult `json:"probes"`
	Passed        bool          `json:"passed"`
}

// ProbeResult is the outcome of one containment probe.
type ProbeResult struct {
	Name      string `json:"name"`
	Contained bool   `json:"contained"`
	Detail    string `json:"detail"`
	// Exit is the probe run's exit classification ("" for host-side
	// probes that start no sandbox).
	Exit string `json:"exit,omitempty"`
	// HostLacks names the mechanism a foreign-ABI probe found absent from
	// this host (outside the sandbox too), so there was nothing to
	// contain: e.g. "ia32 system-call entry (int 0x80)". Empty when the
	// host has it.
	HostLacks string  `json:"host_lacks,omitempty"`
	MS        float64 `json:"ms"`
}

// identity is what a qualification record must match.
type identity struct {
	binaryKey, kernel, policy string
	abi                       int
}

func (id identity) file(stateDir string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%d|%s", id.binaryKey, id.kernel, id.abi, id.policy)))
	return filepath.Join(stateDir, "sandbox", "qualification-"+hex.EncodeToString(h[:12])+".json")
}

func (q *Qualification) matches(id identity) bool {
	return q.Passed && q.BinaryKey == id.binaryKey && q.KernelRelease == id.kernel &&
		q.LandlockABI == id.abi && q.PolicyDigest == id.policy
}

// Failed returns the names of probes that did not end contained.
func (q Qualification) Failed() []string {
	var out []string
	for _, p := range q.Probes {
		if !p.Contained {
			out = append(out, p.Name)
		}
	}
	return out
}

func loadRecord(path string) (*Qualification, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var q Qualification
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("decode qualification record: %w", err)
	}
	return &q, nil
}

// storeRecord writes q atomically with mode 0600 under a 0700 directory.
func storeRecord(path string, q *Qualification) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create qualification directory: %w", err)
	}
	b, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write qualification record: %w", err)
	}
	return os.Rename(tmp, path)
}

// requireQualified returns the passing record for the current identity,
// qualifying first when allowed (issue 8 scope 6). Missing evidence refuses
// (notes §6: "missing evidence = refuse").
func (s *Sandbox) requireQualified(ctx context.Context) (*Qualification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.qualified != nil {
		return s.qualified, nil
	}
	id, err := currentIdentity()
	if err != nil {
		return nil, err
	}
	q, err := loadRecord(id.file(s.cfg.StateDir))
	if err == nil && q.matches(id) && q.hostStillLacks(ctx) {
		s.qualified = q
		return q, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, unavailable("qualification", "a readable qualification record", err)
	}
	if !s.cfg.AutoQualify {
		return nil, unavailable("qualification", "a passing qualification for this binary and kernel (run 'coagent8 sandbox qualify')", nil)
	}
	fmt.Fprintln(s.cfg.Notice, "coagent8: no sandbox qualification matches this binary and kernel; qualifying now")
	if q, err = s.qualifyLocked(ctx, id); err != nil {
		return nil, err
	}
	if !q.Passed {
		return nil, unavailable("qualification", "passing containment probes (failed: "+strings.Join(q.Failed(), ", ")+")", nil)
	}
	return q, nil
}

// Qualify runs every containment probe inside the sandbox, stores the record
// in the state directory and returns it. A record with Passed false is
// stored too (evidence), but no run is admitted on it.
func (s *Sandbox) Qualify(ctx context.Context) (Qualification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := currentIdentity()
	if err != nil {
		return Qualification{}, err
	}
	q, err := s.qualifyLocked(ctx, id)
	if err != nil {
		return Qualification{}, err
	}
	return *q, nil
}

func (s *Sandbox) qualifyLocked(ctx context.Context, id identity) (*Qualification, error) {
	q, err := s.runProbes(ctx, id)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// Interrupted probes prove nothing either way: no record, no
		// failed-qualification event; the next run qualifies again.
		return nil, fault.New(fault.Aborted, "sandbox.qualification_interrupted",
			"qualification was interrupted before every probe ran; nothing was recorded")
	}
	if err := s.record(qualificationEvent(q)); err != nil {
		return nil, err
	}
	if err := storeRecord(id.file(s.cfg.StateDir), q); err != nil {
		return nil, unavailable("qualification", "a writable state directory for the qualification record", err)
	}
	s.qualified = nil
	if q.Passed {
		s.qualified = q
	}
	return q, nil
}
