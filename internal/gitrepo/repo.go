package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

// Timeout bounds one git command.
const Timeout = 30 * time.Second

// Reasons of the typed errors of this package.
const (
	ReasonNotRepo = "git.not_repository"
	ReasonFailed  = "git.failed"
	ReasonTimeout = "git.timeout"
	ReasonMissing = "git.missing"
)

// envAllow are the variables git inherits (as in gitscope): PATH, home and
// temp basics. GIT_* never passes.
var envAllow = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "USERPROFILE", "HOMEDRIVE", "HOMEPATH",
	"SYSTEMROOT", "TMPDIR", "TEMP", "TMP"}

// safeConfig disables what would make git run a program named by a
// repository or user configuration (issue 15 scope 1): hooks (hooksPath
// /dev/null: no hook exists, porcelain included), fsmonitor, external
// diff, pager, credential helpers, and every transport (protocol.allow
// never: no ssh, so core.sshCommand and remote *pack programs never run).
// Filter, diff and merge drivers are named per repository; [Open] sets
// each one it finds to "" (neutralEnv).
var safeConfig = []string{"core.hooksPath=/dev/null", "core.fsmonitor=false", "core.untrackedCache=false",
	"diff.external=", "core.pager=cat", "color.ui=false", "protocol.allow=never", "gc.auto=0",
	"core.quotePath=false", "credential.helper=", "commit.gpgSign=false", "tag.gpgSign=false"}

// Repo is a Git work tree: its top level, git directory and common
// directory (they differ for linked worktrees), all absolute.
type Repo struct {
	Top, GitDir, CommonDir string

	bin string
	env []string
	// neutral is neutralEnv's result, computed by the first command
	// that can run a driver (noDrivers), once.
	neutral struct {
		once sync.Once
		env  []string
		err  error
	}
}

// Open returns the repository whose top level is dir. dir must be absolute
// and be the top level itself (a subdirectory is not the workspace):
// INVALID_INPUT git.not_repository otherwise; a missing git binary is
// CLI_NOT_FOUND git.missing; a configuration git cannot list is
// PROCESS_ERROR git.config (from the first command that needs it). Every
// command of the Repo that could run one runs with the configured filter,
// diff and merge drivers set to "" (see safeConfig, noDrivers).
func Open(ctx context.Context, env config.Env, dir string) (*Repo, error) {
	if !filepath.IsAbs(dir) {
		return nil, fault.New(fault.InvalidInput, ReasonNotRepo, "The workspace path must be absolute.")
	}
	bin, err := exec.LookPath("git")
	if p, ok := env.Lookup("PATH"); ok {
		bin, err = lookIn(p)
	}
	if err != nil {
		return nil, fault.Wrap(fault.CLINotFound, ReasonMissing, "git is not installed or not on PATH.", err)
	}
	r := &Repo{bin: bin, env: baseEnv(env)}
	if !r.discover(dir) {
		if err := r.revParse(ctx, dir); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// revParse asks git for the top level, git and common directories of
// dir, which must be the top level.
func (r *Repo) revParse(ctx context.Context, dir string) error {
	out, err := r.Run(ctx, dir, nil, nil, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 3 {
		return fault.Wrap(fault.InvalidInput, ReasonNotRepo, "The workspace is not a Git work tree: run coagent8 at the top of a Git checkout, or name one (--workspace on the terminal, workspace_path over MCP).", err)
	}
	r.Top, r.GitDir, r.CommonDir = lines[0], lines[1], lines[2]
	if !sameDir(r.Top, dir) {
		return fault.New(fault.InvalidInput, ReasonNotRepo, "The workspace must be the top level of its Git work tree.").With("top", filepath.Base(r.Top))
	}
	return nil
}

// discover reads dir/.git in-process (a directory, or a linked
// worktree's "gitdir:" file and its commondir), sparing a git process on
// the admission path; anything unusual is left to rev-parse.
func (r *Repo) discover(dir string) bool {
	dot := filepath.Join(dir, ".git")
	st, err := os.Lstat(dot)
	switch {
	case err != nil:
		return false
	case st.IsDir():
		r.GitDir, r.CommonDir = dot, dot
	case st.Mode().IsRegular():
		b, err := os.ReadFile(dot)
		rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if err != nil || !ok {
			return false
		}
		if !filepath.IsAbs(rest) {
			rest = filepath.Join(dir, rest)
		}
		r.GitDir, r.CommonDir = filepath.Clean(rest), filepath.Clean(rest)
		if c, err := os.ReadFile(filepath.Join(r.GitDir, "commondir")); err == nil {
			cd := strings.TrimSpace(string(c))
			if !filepath.IsAbs(cd) {
				cd = filepath.Join(r.GitDir, cd)
			}
			r.CommonDir = filepath.Clean(cd)
		}
	default:
		return false
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "HEAD")); err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(r.CommonDir, "objects")); err != nil {
		return false
	}
	r.Top = filepath.Clean(dir)
	return true
}

func lookIn(path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, "git")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func sameDir(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ea == eb
}

func baseEnv(env config.Env) []string {
	e := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_PAGER=cat", "LC_ALL=C", "GIT_ATTR_NOSYSTEM=1"}
	for _, k := range envAllow {
		if v, ok := env.Lookup(k); ok {
			e = append(e, k+"="+v)
		}
	}
	return e
}

// Run runs git in dir with the repository's fixed environment plus extra
// (KEY=VALUE) and returns stdout. A non-zero exit is PROCESS_ERROR
// git.failed whose internal cause ([Error]) carries the arguments and
// stderr; the exit code is reachable with [ExitCode].
func (r *Repo) Run(ctx context.Context, dir string, extra []string, stdin []byte, args ...string) ([]byte, error) {
	env := append(append([]string(nil), r.env...), extra...)
	if outside(extra) {
		env = append(env, outsideEnv...)
	}
	if !noDrivers(args, extra) {
		r.neutral.once.Do(func() { r.neutral.env, r.neutral.err = r.neutralEnv(ctx) })
		if r.neutral.err != nil {
			return nil, r.neutral.err
		}
		env = append(env, r.neutral.env...)
	}
	return r.run(ctx, dir, env, stdin, args...)
}

func (r *Repo) run(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	argv := []string{"--no-pager"}
	for _, c := range safeConfig {
		argv = append(argv, "-c", c)
	}
	cmd := exec.CommandContext(ctx, r.bin, append(argv, args...)...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fault.Wrap(fault.Timeout, ReasonTimeout, "A Git command exceeded its time limit.", ctx.Err())
	case err != nil:
		return stdout.Bytes(), fault.Wrap(fault.ProcessError, ReasonFailed, "A Git command failed.",
			&Error{Args: args, Stderr: strings.TrimSpace(stderr.String()), Err: err})
	}
	return stdout.Bytes(), nil
}

// Error is the internal cause of a failed git command (log it only after
// diagnostic redaction: stderr may name paths).
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	return "git " + strings.Join(e.Args, " ") + ": " + e.Err.Error() + ": " + e.Stderr
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns git's exit status from an error of [Repo.Run], or -1.
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
