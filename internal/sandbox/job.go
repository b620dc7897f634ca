package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// job is an admitted run: every field has been validated and every path is
// derived by the supervisor, never by the caller's child (notes §3 step 1).
type job struct {
	id          string // set by Run before admission is recorded; "" = runJob picks one
	path        string // executable path inside the sandbox
	args        []string
	env         []string
	envRemoved  []string
	input       string // host directory copied into the workspace, or ""
	dir         string // working directory inside the sandbox
	binds       []bind
	limits      Limits
	stdout      io.Writer
	stderr      io.Writer
	artifactsTo string
	// gate is the agent profile's one network channel; nil for a task
	// run (no network at all).
	gate *gateChannel
	// candidate is the candidate profile's copy-on-write workspace; nil
	// otherwise.
	candidate *candidateRoots
	// readWS is the read profile's workspace, projected read-only; "".
	readWS string
	// verifyUpper, with readWS, is the verify profile: the candidate's
	// upper layer stacked read-only on the projection (verify.go); "".
	verifyUpper string
	// git is the git directory a read or candidate workspace's .git file
	// points to outside it; nil otherwise.
	git *gitRoots
	// pins are the binds attached from a checked detached mount ([Pin]).
	pins []pinned
	// scratchIn and scratchOut are the files carried into and out of
	// scratch ([Spec.ScratchIn]).
	scratchIn, scratchOut []ScratchFile
}

// bind is one read-only host path made visible inside the sandbox.
type bind struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
	Dir bool   `json:"dir"`
}

// forbiddenRoots may not be bound or copied: the sandbox synthesizes them
// or they expose the host (notes test 10 "caller-controlled roots").
var forbiddenRoots = []string{"/proc", "/sys", "/dev", "/tmp", "/job", "/run", "/var/run"}

// admit validates spec into a job.
func (s *Sandbox) admit(spec Spec) (job, error) {
	if err := admitCommand(spec); err != nil {
		return job{}, err
	}
	if err := checkDir(spec.Dir); err != nil {
		return job{}, err
	}
	lim, err := spec.Limits.withDefaults()
	if err != nil {
		return job{}, err
	}
	env, removed, err := buildEnv(spec.Env)
	if err != nil {
		return job{}, err
	}
	total := 0
	for _, a := range append(spec.Args[:len(spec.Args):len(spec.Args)], env...) {
		total += len(a)
	}
	if total > maxArgTotal {
		return job{}, invalid("sandbox.args", "arguments and environment too long in total")
	}
	j := job{path: spec.Path, args: spec.Args, env: env, envRemoved: removed,
		dir: path.Join(insideWorkspace, spec.Dir), limits: lim,
		stdout: orDiscard(spec.Stdout), stderr: orDiscard(spec.Stderr)}
	if j.input, err = s.admitRoot(spec.Input, true); err != nil {
		return job{}, err
	}
	if err := checkDirInInput(j.input, spec.Dir); err != nil {
		return job{}, err
	}
	if j.artifactsTo, err = s.admitRoot(spec.ArtifactsTo, true); err != nil {
		return job{}, err
	}
	if j.scratchIn, err = admitScratch(spec.ScratchIn); err != nil {
		return job{}, err
	}
	if j.scratchOut, err = admitScratch(spec.ScratchOut); err != nil {
		return job{}, err
	}
	for _, p := range spec.ReadOnly {
		b, err := s.admitBind(p)
		if err != nil {
			return job{}, err
		}
		j.binds = append(j.binds, b)
	}
	return j, nil
}

// checkDirInInput requires the working directory dir (already a clean
// relative path) to be a directory of the workspace, which is a copy of
// input: a missing one is the caller's mistake, not the host's.
func checkDirInInput(input, dir string) error {
	if dir == "" || dir == "." {
		return nil
	}
	if input == "" {
		return invalid("sandbox.dir", fmt.Sprintf("working directory %q does not exist: without --input the workspace is empty", dir))
	}
	fi, err := checkNoSymlinks(filepath.Join(input, dir))
	if err != nil || !fi.IsDir() {
		return invalid("sandbox.dir", fmt.Sprintf("working directory %q is not a directory (without symlinks) of the input", dir))
	}
	return nil
}

// admitRoot checks a caller-supplied host directory: canonical, symlink-free,
// a directory, not "/", and disjoint from the state and jobs directories.
func (s *Sandbox) admitRoot(p string, mustDir bool) (string, error) {
	if p == "" {
		return "", nil
	}
	if err := CheckPath(p); err != nil {
		return "", err
	}
	fi, err := checkNoSymlinks(p)
	if err != nil {
		return "", err
	}
	if mustDir && !fi.IsDir() {
		return "", invalid("sandbox.root", "path is not a directory")
	}
	if p == "/" {
		return "", invalid("sandbox.root", "the filesystem root cannot be a task root")
	}
	for _, own := range []string{s.cfg.StateDir, s.cfg.JobsDir} {
		if within(p, own) || within(own, p) {
			return "", invalid("sandbox.root", "path overlaps coagent8's state or job directories")
		}
	}
	return p, nil
}

// admitBind checks an extra read-only path. A forbidden root is named
// before the overlap with coagent8's own directories: /tmp itself also
// contains a state directory under /tmp, and what the caller needs to
// know is that the sandbox replaces /tmp.
func (s *Sandbox) admitBind(p string) (bind, error) {
	if err := CheckPath(p); err != nil {
		return bind{}, err
	}
	if err := checkForbiddenRoot(p); err != nil {
		return bind{}, err
	}
	if _, err := s.admitRoot(p, false); err != nil {
		return bind{}, err
	}
	fi, _ := checkNoSymlinks(p)
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		// A unix socket is reached by its inode through any bind, and a
		// read-only mount does not govern connect (nor does Landlock
		// below ABI 9): binding a daemon's socket would hand the command
		// that daemon. Devices and FIFOs are no read-only content either.
		return bind{}, invalid("sandbox.root", fmt.Sprintf("%s is a %s, not a file or directory: only files and directories can be bound read-only", p, fileKind(fi.Mode())))
	}
	return bind{Src: p, Dst: p, Dir: fi.IsDir()}, nil
}

// fileKind names a non-regular, non-directory file mode for a refusal.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "unix socket"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// checkForbiddenRoot refuses p (canonical) when it is or lies under one of
// [forbiddenRoots].
func checkForbiddenRoot(p string) error {
	for _, f := range forbiddenRoots {
		if !within(p, f) {
			continue
		}
		where := "is under " + f + ", which"
		if p == f {
			where = "is a directory"
		}
		return invalid("sandbox.root", fmt.Sprintf("%s %s the sandbox replaces with its own; bind a path outside %s",
			p, where, strings.Join(forbiddenRoots, ", ")))
	}
	return nil
}

// within reports whether p is base or beneath it (both canonical).
func within(p, base string) bool {
	return p == base || strings.HasPrefix(p, strings.TrimSuffix(base, "/")+"/")
}

func newJobID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
