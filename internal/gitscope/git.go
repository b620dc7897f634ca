package gitscope

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
)

// Limits (contract.md §4, §7).
const (
	GitTimeout     = 15 * time.Second
	GitBufferLimit = 4 << 20
	SnapshotBudget = 3 << 20
	UntrackedLimit = 256 << 10
)

// Marks appended where text was cut; the wording is the contract's.
const (
	BufferWarning    = "[Warning: Git diff exceeded buffer limit (4MB) and was truncated.]"
	BudgetWarning    = "[Incomplete snapshot: total prompt budget reached.]"
	errGitFailedText = "A Git command failed while collecting the review scope."
)

// envAllow are the only variables git inherits: it needs PATH for helpers
// it never runs here, HOME/XDG for the user's global excludes file, and
// temp/system basics. No GIT_* variable passes (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, GIT_CONFIG_*, GIT_EXTERNAL_DIFF… would redirect it).
var envAllow = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "USERPROFILE", "HOMEDRIVE", "HOMEPATH",
	"SYSTEMROOT", "TMPDIR", "TEMP", "TMP"}

// safeConfig overrides every setting that makes a read run a command or
// touch the network (see the package doc).
var safeConfig = []string{
	"core.fsmonitor=false", "core.untrackedCache=false", "log.showSignature=false",
	"diff.external=", "core.pager=cat", "color.ui=false", "protocol.allow=never",
}

// git runs git in one directory with a fixed environment.
type git struct {
	path string
	dir  string
	env  []string
	cfg  []string // -c overrides, safeConfig plus filter drivers
}

func newGit(env config.Env, path, dir string) *git {
	e := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_PAGER=cat", "LC_ALL=C", "GIT_ATTR_NOSYSTEM=1"}
	for _, k := range envAllow {
		if v, ok := env.Lookup(k); ok {
			e = append(e, k+"="+v)
		}
	}
	return &git{path: path, dir: dir, env: e, cfg: safeConfig}
}

// disableFilters empties every clean/smudge/process filter driver the
// repository's configuration names: a clean filter runs when git diff reads
// a modified work-tree file. An empty command means "no filter" to git.
func (g *git) disableFilters(ctx context.Context) error {
	out, _, err := g.run(ctx, "config", "--name-only", "--get-regexp", `^filter\.`)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1 = no such key
		return err
	}
	names := map[string]bool{}
	for _, key := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(key), "filter.")
		if i := strings.LastIndexByte(rest, '.'); ok && i > 0 {
			names[rest[:i]] = true
		}
	}
	cfg := append([]string(nil), safeConfig...)
	for _, n := range sortedKeys(names) {
		for _, k := range []string{"clean=", "smudge=", "process=", "required=false"} {
			cfg = append(cfg, "filter."+n+"."+k)
		}
	}
	g.cfg = cfg
	return nil
}

// run executes git with args and returns stdout cut to GitBufferLimit
// (truncated reports a cut). A non-zero exit is PROCESS_ERROR whose
// internal cause carries git's stderr; a timeout is TIMEOUT.
func (g *git) run(ctx context.Context, args ...string) (out string, truncated bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, GitTimeout)
	defer cancel()
	argv := []string{"--no-pager"}
	for _, c := range g.cfg {
		argv = append(argv, "-c", c)
	}
	cmd := exec.CommandContext(ctx, g.path, append(argv, args...)...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = g.dir, g.env, time.Second
	stdout, stderr := &capped{limit: GitBufferLimit}, &capped{limit: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	switch {
	case stdout.cut:
		// git died of the closed pipe after the cut; the kept text is valid.
		return stdout.buf.String(), true, nil
	case ctx.Err() != nil:
		return "", false, fault.Wrap(fault.Timeout, "git.timeout", "A Git command exceeded 15 s.", ctx.Err())
	case err != nil:
		return stdout.buf.String(), false, fault.Wrap(fault.ProcessError, "git.failed", errGitFailedText,
			&Error{Args: args, Stderr: strings.TrimSpace(stderr.buf.String()), Err: err})
	}
	return stdout.buf.String(), false, nil
}

// Error is the internal cause of a failed git command (logged only after
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

// capped keeps the first limit bytes and then fails the write, which makes
// os/exec close the pipe so git stops early instead of running to the end.
type capped struct {
	limit int
	buf   bytes.Buffer
	cut   bool
}

var errCapped = errors.New("output limit reached")

func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if len(p) <= room {
		return c.buf.Write(p)
	}
	c.buf.Write(p[:max(room, 0)])
	c.cut = true
	return max(room, 0), errCapped
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
