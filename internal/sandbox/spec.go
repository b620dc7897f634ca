package sandbox

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// Spec describes one task-sandbox run. The caller is trusted configuration
// (the user's verify commands, the CLI user), never a model: no field is
// taken from an agent's request (issue 8 "only commands the user listed").
//
// A Spec deliberately has no network or credential field.
type Spec struct {
	// Path is the canonical absolute path of the executable (no symlinks, no
	// "..", no control bytes). It is exec'd directly; there is no shell and
	// no PATH lookup.
	Path string
	// Args are the arguments after argv[0], passed verbatim.
	Args []string
	// Input is an optional host directory copied into the task workspace
	// before the run. The user's directory itself is never mounted: the
	// child writes only the copy. Empty means an empty workspace.
	Input string
	// Dir is the working directory relative to the workspace ("" = the
	// workspace root). It must stay beneath the workspace.
	Dir string
	// ReadOnly lists extra canonical absolute host paths (directories or
	// files, e.g. a Go toolchain) bound read-only at the same path.
	ReadOnly []string
	// Env holds extra KEY=VALUE entries for the child. Names of provider
	// credentials and loader/shell hooks are removed and listed in the
	// receipt; the host environment never reaches the child.
	Env []string
	// Limits are enforced from outside the child; zero fields take defaults.
	Limits Limits
	// Stdout and Stderr receive the child's output, bounded by
	// Limits.Output in total. Nil discards.
	Stdout, Stderr io.Writer
	// ArtifactsTo is an optional host directory into which regular files
	// left in the artifacts folder are copied (symlinks and special files
	// are rejected and listed in the receipt).
	ArtifactsTo string
	// ScratchIn are copied into /job/scratch before the command starts
	// and ScratchOut copied out of it after the command's tree has ended
	// ([ScratchFile]): a CLI's own state carried between runs (a Claude
	// Code session transcript for --resume), copied rather than bound so
	// the stored file is never open to the command.
	ScratchIn, ScratchOut []ScratchFile
}

// Limits are the resource ceilings armed before the command starts.
// Zero fields take the documented defaults.
type Limits struct {
	// Memory is the memory+swap ceiling in bytes (default 512 MiB).
	Memory int64 `json:"memory_bytes"`
	// Pids is the maximum number of tasks in the job (default 256).
	Pids int64 `json:"pids"`
	// CPU is the CPU bandwidth quota in millicores (default 1000 = 1 core).
	CPU int64 `json:"cpu_millicores"`
	// Wall is the wall-clock deadline (default 10 minutes).
	Wall time.Duration `json:"wall_ns"`
	// Output bounds stdout+stderr in bytes (default 16 MiB).
	Output int64 `json:"output_bytes"`
	// FileSize bounds any one file the child writes (RLIMIT_FSIZE, default
	// 1 GiB).
	FileSize int64 `json:"file_size_bytes"`
	// Tmp is the size of the child's private /tmp in bytes (default 64 MiB);
	// it is charged to the memory ceiling.
	Tmp int64 `json:"tmp_bytes"`
	// Disk bounds what the child's writes may take of the file systems
	// holding its job root (workspace copy, scratch, artifacts) and a
	// candidate's upper layer, which are host disk that neither Memory nor
	// FileSize (one file) bounds (default 8 GiB, the workspace copy
	// bound). The supervisor reads their free space while the command
	// runs and ends the tree (exit class disk_limit) once it has fallen
	// by more than Disk since the start, or below [MinFreeDisk]. Free
	// space is the file system's: another process writing there counts
	// too.
	Disk int64 `json:"disk_bytes"`
	// DiskFiles bounds the inodes the child's writes may take of the same
	// file systems (default 2,097,152: twice the workspace copy's file
	// bound), watched like Disk: empty files cost no bytes, and a file
	// system out of inodes refuses every new file as one out of space
	// does. A file system that does not count inodes (f_files 0) is not
	// watched for them.
	DiskFiles int64 `json:"disk_files"`
}

// MinFreeDisk and MinFreeFiles are the free space and inodes a run leaves
// the file systems it writes ([Limits.Disk], [Limits.DiskFiles]): the
// user's state and work share them.
const (
	MinFreeDisk  = 1 << 30
	MinFreeFiles = 1 << 16
)

// Upper bounds on limits: a request beyond these is an input error, not a
// silently clamped value.
const (
	maxMemory = 64 << 30
	maxPids   = 32768
	maxCPU    = 256000
	maxWall   = 24 * time.Hour
	maxOutput = 1 << 30
	maxDisk   = 1 << 50
)

// withDefaults returns l with zero fields set to defaults and validates it.
func (l Limits) withDefaults() (Limits, error) {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.Memory, 512<<20)
	def(&l.Pids, 256)
	def(&l.CPU, 1000)
	def(&l.Output, 16<<20)
	def(&l.FileSize, 1<<30)
	def(&l.Tmp, 64<<20)
	def(&l.Disk, 8<<30)
	def(&l.DiskFiles, 1<<21)
	if l.Wall == 0 {
		l.Wall = 10 * time.Minute
	}
	return l, l.validate()
}

func (l Limits) validate() error {
	checks := []struct {
		name      string
		v, lo, hi int64
		unit      func(int64) string
	}{
		{"memory", l.Memory, 16 << 20, maxMemory, mib},
		{"pids", l.Pids, 8, maxPids, plain},
		{"cpu", l.CPU, 10, maxCPU, millicores},
		{"wall", int64(l.Wall), int64(10 * time.Millisecond), int64(maxWall), duration},
		{"output", l.Output, 1, maxOutput, mib},
		{"file_size", l.FileSize, 1, maxMemory, mib},
		{"tmp", l.Tmp, 1 << 20, maxMemory, mib},
		{"disk", l.Disk, 1 << 20, maxDisk, mib},
		{"disk_files", l.DiskFiles, 1 << 10, maxDisk, plain},
	}
	for _, c := range checks {
		if c.v < c.lo || c.v > c.hi {
			return fault.New(fault.InvalidInput, "sandbox.limit",
				fmt.Sprintf("limit %s=%s is outside [%s, %s]", c.name, c.unit(c.v), c.unit(c.lo), c.unit(c.hi)))
		}
	}
	return nil
}

// Units for limit messages: the caller set the limit in these units.
func plain(v int64) string      { return strconv.FormatInt(v, 10) }
func millicores(v int64) string { return strconv.FormatInt(v, 10) + " millicores" }
func duration(v int64) string   { return time.Duration(v).String() }

// mib shows whole MiB, else bytes (a limit below 1 MiB is set in bytes).
func mib(v int64) string {
	if v%(1<<20) == 0 {
		return strconv.FormatInt(v>>20, 10) + " MiB"
	}
	return strconv.FormatInt(v, 10) + " bytes"
}
