package sandbox

import (
	"encoding/json"
	"fmt"
	"time"
)

// ExitClass classifies how a run ended (issue 8 scope 5).
type ExitClass int

// Exit classes. Uncertain means the supervisor could not confirm that the
// process tree is gone; it is never success.
const (
	ExitExited ExitClass = iota + 1
	ExitSignalled
	ExitTimedOut
	ExitOutOfMemory
	ExitCancelled
	ExitOutputLimit
	// ExitDiskLimit: the run's writes took more of the host's disk than
	// [Limits.Disk] allows.
	ExitDiskLimit
	ExitUncertain
)

// String returns the stable JSON name of c; it panics on an unknown value.
func (c ExitClass) String() string {
	switch c {
	case ExitExited:
		return "exited"
	case ExitSignalled:
		return "signalled"
	case ExitTimedOut:
		return "timed_out"
	case ExitOutOfMemory:
		return "out_of_memory"
	case ExitCancelled:
		return "cancelled"
	case ExitOutputLimit:
		return "output_limit"
	case ExitDiskLimit:
		return "disk_limit"
	case ExitUncertain:
		return "uncertain"
	}
	panic(fmt.Sprintf("sandbox: unknown ExitClass %d", int(c)))
}

// MarshalText encodes c as its name.
func (c ExitClass) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText decodes a name written by MarshalText.
func (c *ExitClass) UnmarshalText(b []byte) error {
	for v := ExitExited; v <= ExitUncertain; v++ {
		if v.String() == string(b) {
			*c = v
			return nil
		}
	}
	return fmt.Errorf("unknown exit class %q", b)
}

// Exit is the terminal state of a run.
type Exit struct {
	Class ExitClass `json:"class"`
	// Code is the exit status when Class is exited, else -1.
	Code int `json:"code"`
	// Signal names the terminating signal when Class is signalled (and for
	// the other classes when one was observed), e.g. "SIGSYS".
	Signal string `json:"signal,omitempty"`
}

// Success reports whether the command exited with status 0 and the tree was
// confirmed empty.
func (e Exit) Success() bool { return e.Class == ExitExited && e.Code == 0 }

// Kernel records the host facts the run depended on.
type Kernel struct {
	Release        string   `json:"release"`
	Arch           string   `json:"arch"`
	LandlockABI    int      `json:"landlock_abi"`
	LandlockErrata int      `json:"landlock_errata"`
	Namespaces     []string `json:"namespaces"`
	Cgroup         string   `json:"cgroup"`
}

// Observed holds values read back from the kernel after the run (R-072:
// "recorded ceilings come from the cgroup files, not the request").
type Observed struct {
	MemoryLimitBytes int64 `json:"memory_limit_bytes"`
	MemoryPeakBytes  int64 `json:"memory_peak_bytes"`
	OOMKills         int64 `json:"oom_kills"`
	PidsMax          int64 `json:"pids_max"`
	PidsLimitHits    int64 `json:"pids_limit_hits"`
	CPUQuotaMicros   int64 `json:"cpu_quota_us"`
	CPUPeriodMicros  int64 `json:"cpu_period_us"`
	CPUTimeNanos     int64 `json:"cpu_time_ns"`
	OutputBytes      int64 `json:"output_bytes"`
	FileSizeLimit    int64 `json:"file_size_limit_bytes"`
}

// Artifact is one regular file collected from the artifacts folder.
type Artifact struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Receipt is the containment receipt of one run (issue 8 scope 5,
// It holds names, digests and numbers, never environment
// values or output.
type Receipt struct {
	JobID        string   `json:"job_id"`
	Profile      string   `json:"profile"`
	PolicyDigest string   `json:"policy_digest"`
	BinaryDigest string   `json:"binary_digest"`
	Kernel       Kernel   `json:"kernel"`
	Command      []string `json:"command"`
	EnvNames     []string `json:"env_names"`
	EnvRemoved   []string `json:"env_removed,omitempty"`
	Requested    Limits   `json:"limits_requested"`
	Observed     Observed `json:"limits_observed"`
	Exit         Exit     `json:"exit"`
	// TreeEmpty reports whether the job's cgroup was verified empty after
	// the run.
	TreeEmpty bool       `json:"tree_empty"`
	Started   time.Time  `json:"started"`
	SetupMS   float64    `json:"setup_ms"`
	RunMS     float64    `json:"run_ms"`
	TotalMS   float64    `json:"total_ms"`
	Artifacts []Artifact `json:"artifacts"`
	// ArtifactsRejected lists entries that were not collected (symlinks,
	// special files, oversize), escaped for display.
	ArtifactsRejected []string `json:"artifacts_rejected,omitempty"`
	// PinsChanged lists the pinned files ([Pin]) found changed after
	// their check, while or after the command ran: the run's result is
	// refused (SANDBOX_UNAVAILABLE sandbox.pin_changed, returned with
	// this receipt). A run ended at the after-exec comparison is
	// classified cancelled.
	PinsChanged []string `json:"pins_changed,omitempty"`
}

// ProfileTask is the only profile this package runs.
const ProfileTask = "task"

// JSON returns the indented JSON encoding of r.
func (r Receipt) JSON() []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("sandbox: receipt does not encode: %v", err))
	}
	return b
}
