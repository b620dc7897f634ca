package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/config"
)

// runCLI runs the command line in-process with captured streams.
func runCLI(t *testing.T, env config.Env, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = MainEnv(context.Background(), args, Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb}, env)
	return code, out.String(), errb.String()
}

func testEnv(t *testing.T, extra ...string) config.Env {
	t.Helper()
	return config.FromList(append([]string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()}, extra...))
}

// TestUsageErrors: cobra's own errors (unknown command, argument count)
// and an unknown subcommand of a group are usage errors: one typed line
// naming the problem (INVALID_INPUT with an args.* or flag.* reason, as
// every other refusal is printed; they were untyped "coagent8: MESSAGE"),
// the help hint of the command at fault, exit 2, nothing on stdout —
// never the generic internal error.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args   []string
		want   string // substring of the first stderr line's message
		reason string
		hint   string
	}{
		{[]string{"versoin"}, `unknown command "versoin" for "coagent8"; did you mean version?`, "args.unknown_command", "coagent8"},
		{[]string{"nonsense"}, `unknown command "nonsense" for "coagent8"`, "args.unknown_command", "coagent8"},
		{[]string{"pricess"}, `did you mean prices?`, "args.unknown_command", "coagent8"},
		{[]string{"consult"}, "missing QUESTION", "args.missing", "coagent8 consult"},
		{[]string{"consult", "a", "b"}, "too many arguments: want QUESTION, got 2", "args.extra", "coagent8 consult"},
		{[]string{"redact", "FILE"}, `redact takes no arguments (got "FILE")`, "args.extra", "coagent8 redact"},
		{[]string{"sandbox", "run"}, "missing the command", "args.missing", "coagent8 sandbox run"},
		{[]string{"gate", "revoke"}, "missing GRANT_ID", "args.missing", "coagent8 gate revoke"},
		{[]string{"gate", "revoke", "grant-1", "--job", "job-1"}, "not both", "args.conflict", "coagent8 gate revoke"},
		// A command without subcommands takes an extra argument as one,
		// not as an unknown command; the same validator for every such
		// command, including those declared with cobra.NoArgs in files
		// other than this package's tree (gate.go).
		{[]string{"doctor", "extra"}, `doctor takes no arguments (got "extra")`, "args.extra", "coagent8 doctor"},
		{[]string{"audit", "extra"}, `audit takes no arguments (got "extra")`, "args.extra", "coagent8 audit"},
		{[]string{"audit", "a", "b"}, `audit takes no arguments (got "a" and 1 more)`, "args.extra", "coagent8 audit"},
		{[]string{"audit", "limit"}, `audit takes no arguments (got "limit"); did you mean --limit?`, "args.extra", "coagent8 audit"},
		{[]string{"version", "x"}, `version takes no arguments (got "x")`, "args.extra", "coagent8 version"},
		{[]string{"serve", "x"}, `serve takes no arguments (got "x")`, "args.extra", "coagent8 serve"},
		{[]string{"sandbox", "qualify", "x"}, `sandbox qualify takes no arguments (got "x")`, "args.extra", "coagent8 sandbox qualify"},
		{[]string{"gate", "serve", "x"}, `gate serve takes no arguments (got "x")`, "args.extra", "coagent8 gate serve"},
		{[]string{"gate", "grant", "x"}, `gate grant takes no arguments (got "x")`, "args.extra", "coagent8 gate grant"},
		{[]string{"completion", "bash", "x"}, `completion bash takes no arguments (got "x")`, "args.extra", "coagent8 completion bash"},
		{[]string{"prices", "show", "extra"}, `prices show takes no arguments (got "extra")`, "args.extra", "coagent8 prices show"},
		{[]string{"doctor", "\x1b[2Kx"}, `doctor takes no arguments (got "\x1b[2Kx")`, "args.extra", "coagent8 doctor"},
		// One positional argument: the same "missing NAME" as consult's,
		// and an extra one is named.
		{[]string{"admit"}, "missing JOB", "args.missing", "coagent8 admit"},
		{[]string{"reject"}, "missing JOB", "args.missing", "coagent8 reject"},
		{[]string{"quarantine"}, "missing JOB", "args.missing", "coagent8 quarantine"},
		{[]string{"admit", "j1", "j2"}, `too many arguments: want JOB, got 2 (extra "j2"; quote`, "args.extra", "coagent8 admit"},
		{[]string{"reject", "j1", "j2", "j3"}, `too many arguments: want JOB, got 3 (extra "j2" and 1 more; quote`, "args.extra", "coagent8 reject"},
		{[]string{"quarantine", "j1", "j2"}, `too many arguments: want JOB, got 2 (extra "j2"; quote`, "args.extra", "coagent8 quarantine"},
		{[]string{"jobs", "j1", "j2"}, `too many arguments: want JOB, got 2 (extra "j2"; quote`, "args.extra", "coagent8 jobs"},
		{[]string{"gate", "revoke", "g1", "g2"}, `too many arguments: want GRANT_ID, got 2 (extra "g2"; quote`, "args.extra", "coagent8 gate revoke"},
		{[]string{"consult", "a", "b"}, `(extra "b"; quote an argument that contains spaces)`, "args.extra", "coagent8 consult"},
		{[]string{"prices", "bogus"}, `unknown command "bogus" for "coagent8 prices"`, "args.unknown_command", "coagent8 prices"},
		{[]string{"gate", "bogus"}, `unknown command "bogus" for "coagent8 gate"`, "args.unknown_command", "coagent8 gate"},
		{[]string{"sandbox", "bogus"}, `unknown command "bogus" for "coagent8 sandbox"`, "args.unknown_command", "coagent8 sandbox"},
		{[]string{"completion", "bogus"}, `unknown command "bogus" for "coagent8 completion"`, "args.unknown_command", "coagent8 completion"},
		{[]string{"audit", "--limit", "x"}, `invalid argument "x" for "--limit" flag: invalid syntax`, "flag.invalid", "coagent8 audit"},
		// The Go parser's own words are not the user's (no "strconv.ParseInt: parsing …").
		{[]string{"delegate", "--max-minutes", "99999999999999999999", "t"}, `invalid argument "99999999999999999999" for "--max-minutes" flag: value out of range`, "flag.invalid", "coagent8 delegate"},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag (reason", "flag.unknown", "coagent8"},
		// A close flag of the command (its own or inherited) is named.
		{[]string{"delegate", "--max-usdd", "3", "t"}, "unknown flag: --max-usdd; did you mean --max-usd?", "flag.unknown", "coagent8 delegate"},
		{[]string{"audit", "--limt", "3"}, "unknown flag: --limt; did you mean --limit?", "flag.unknown", "coagent8 audit"},
		{[]string{"audit", "--color", "3"}, "unknown flag: --color (reason", "flag.unknown", "coagent8 audit"},
		// The command's own checks of its arguments and flags.
		{[]string{"sandbox", "run", "--", "ls"}, `the command "ls": give its absolute path (there is no PATH lookup)`, "sandbox.path", "coagent8 sandbox run"},
		{[]string{"sandbox", "run", "--input", ".", "--", "/bin/true"}, `--input ".": must be an absolute path`, "sandbox.path", "coagent8 sandbox run"},
		{[]string{"sandbox", "run", "x", "--", "/bin/true"}, "put the command after --", "args.misplaced", "coagent8 sandbox run"},
		{[]string{"audit", "--limit", "-1"}, "--limit -1: use 0 or more", "flag.invalid", "coagent8 audit"},
		{[]string{"operator", "--port", "70000"}, "--port 70000: use 0 to 65535", "flag.invalid", "coagent8 operator"},
		{[]string{"prices", "refresh", "--url", "ftp://x"}, "--url must be an http(s) URL", "flag.invalid", "coagent8 prices refresh"},
		{[]string{"consult", "--effort", "x", "q"}, `--effort "x": use none`, "flag.invalid", "coagent8 consult"},
		{[]string{"consult", " "}, "the question is empty", "args.empty", "coagent8 consult"},
		{[]string{"governance", "ask", "bad;id"}, `model id "bad;id" is not valid`, "model.invalid", "coagent8 governance ask"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errs := runCLI(t, testEnv(t), "", tt.args...)
			lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
			first, hint := lines[0], ""
			if len(lines) == 2 {
				hint = lines[1]
			}
			typed := strings.HasPrefix(first, "coagent8: error [INVALID_INPUT] ") && strings.HasSuffix(first, " (reason: "+tt.reason+")")
			got := []any{code, out, len(lines), typed, strings.Contains(first, tt.want), hint}
			want := []any{ExitUsage, "", 2, true, true, "Run '" + tt.hint + " --help' for usage."}
			if !cmp.Equal(got, want) {
				t.Errorf("got %v, want %v; stderr %q (want %q, reason %s)", got, want, errs, tt.want, tt.reason)
			}
			if strings.Contains(errs, "internal error") {
				t.Errorf("usage error reported as internal: %q", errs)
			}
		})
	}
}

// TestGroupsWithoutSubcommand: a bare group still prints its help and
// exits 0 (unchanged), listing its subcommands.
func TestGroupsWithoutSubcommand(t *testing.T) {
	for _, group := range []string{"prices", "gate", "sandbox", "completion"} {
		code, out, errs := runCLI(t, testEnv(t), "", group)
		if code != ExitOK || !strings.Contains(out, "coagent8 "+group+" [command]") || errs != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", group, code, out, errs)
		}
	}
}

// TestCompletionStillWorks: generating a completion script is unchanged.
func TestCompletionStillWorks(t *testing.T) {
	code, out, errs := runCLI(t, testEnv(t), "", "completion", "bash")
	if code != ExitOK || !strings.Contains(out, "bash completion") || errs != "" {
		t.Errorf("exit %d, stdout %.80q, stderr %q", code, out, errs)
	}
}

// TestCommandPlainErrorStaysInternal: a plain error returned by a
// command's own RunE is a failure (exit 1, generic message), not a usage
// error, and its text does not reach the terminal.
func TestCommandPlainErrorStaysInternal(t *testing.T) {
	var errb bytes.Buffer
	a := &app{io: Stdio{Err: &errb}}
	code := a.report(nil, commandError(errTest("open /secret/path: permission denied")))
	if errs := errb.String(); code != ExitFailure || strings.Contains(errs, "/secret/path") || !strings.Contains(errs, "PROCESS_ERROR") {
		t.Errorf("exit %d, stderr %q; want %d and the generic PROCESS_ERROR", code, errs, ExitFailure)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// TestVersionCommand (issue 18 item 6): `coagent8 version` prints the
// line --version prints and exits 0.
func TestVersionCommand(t *testing.T) {
	env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
	code, flagOut, errs := runCLI(t, env, "", "--version")
	if code != ExitOK || !strings.HasPrefix(flagOut, "coagent8 version ") {
		t.Fatalf("--version: exit %d, %q %q", code, flagOut, errs)
	}
	code, out, errs := runCLI(t, env, "", "version")
	if got, want := []any{code, out}, []any{ExitOK, flagOut}; !cmp.Equal(got, want) {
		t.Errorf("version = %v (stderr %q), want %v", got, errs, want)
	}
}

// TestJobCommandsRelativeWorkspace: admit, reject and delegate refuse a
// relative --workspace with the same typed error as jobs (INVALID_INPUT
// workspace.relative naming the value); they printed an untyped "--workspace
// must be an absolute path" usage line without the value or a reason.
func TestJobCommandsRelativeWorkspace(t *testing.T) {
	env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(cwd, "rel", "ws")
	for _, tt := range []struct {
		args []string
		want string
	}{
		// The workspace is taken as cwd/rel/ws: the job is looked up next.
		{[]string{"admit", "job_x", "--workspace", "rel/ws"}, "(reason: job.unknown)"},
		{[]string{"reject", "job_x", "--workspace", "rel/ws"}, "(reason: job.unknown)"},
		{[]string{"delegate", "--max-usd", "1", "--workspace", "rel/ws", "task"}, "'" + abs + "' (reason: workspace.not_found)"},
	} {
		code, out, errs := runCLI(t, env, "", tt.args...)
		got := []any{code, out, strings.Contains(errs, tt.want)}
		if want := []any{ExitUsage, "", true}; !cmp.Equal(got, want) {
			t.Errorf("%v = %v (stderr %q), want %v", tt.args, got, errs, want)
		}
	}
}

// TestDelegateHelpBase: `delegate --help` names every base the delegate
// job accepts; it said "HEAD (default) or its commit id" without
// uncommitted, which the README and the MCP tool offer.
func TestDelegateHelpBase(t *testing.T) {
	env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
	code, out, errs := runCLI(t, env, "", "delegate", "--help")
	if code != ExitOK || !strings.Contains(out, "--base string") || !strings.Contains(out, "or uncommitted (the working tree as it is") {
		t.Errorf("delegate --help: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestJobsRelativeWorkspace (issue 18 item 6): jobs record absolute
// workspaces, so a relative `jobs --workspace` matched nothing and printed
// []; it is now taken from the current directory, like every terminal
// --workspace (a relative one that does not exist is the typo refusal,
// naming the absolute path).
func TestJobsRelativeWorkspace(t *testing.T) {
	env := config.FromList([]string{"HOME=" + t.TempDir(), "COAGENT8_DIR=" + t.TempDir()})
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, env, "", "jobs", "--workspace", "relative")
	if code != ExitUsage || out != "" || !strings.Contains(errs, "'"+filepath.Join(cwd, "relative")+"' does not exist and no job names it") {
		t.Errorf("jobs --workspace relative: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "", "jobs", "--workspace", "."); code != ExitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("jobs --workspace .: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "", "jobs", "--workspace", t.TempDir()); code != ExitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("jobs --workspace ABS: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// A workspace that does not exist and that no job names is a typo,
	// not "no jobs" (newcomer report: it printed [] and exited 0).
	missing := filepath.Join(t.TempDir(), "nonexistent")
	code, out, errs = runCLI(t, env, "", "jobs", "--workspace", missing)
	if code != ExitUsage || out != "" || !strings.Contains(errs, "does not exist and no job names it") || !strings.Contains(errs, "workspace.unknown") {
		t.Errorf("jobs --workspace MISSING: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestLeavesRefuseArgumentsAlike: after prepare, no command without
// subcommands keeps cobra.NoArgs (whose refusal says "unknown command"):
// each takes [takesNoArgs], wherever it was declared.
func TestLeavesRefuseArgumentsAlike(t *testing.T) {
	root := newRoot(&app{io: Stdio{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, env: testEnv(t)})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.HasSubCommands() && isCobraNoArgs(c.Args) {
			t.Errorf("%s keeps cobra.NoArgs", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// TestUnknownJobNamesTheID: every job command's refusal of an id naming
// no job echoes it (quoted), as gate's "no grant with id X" does; it said
// only "Unknown job handle.".
func TestUnknownJobNamesTheID(t *testing.T) {
	env := testEnv(t)
	ws := t.TempDir()
	for _, args := range [][]string{
		{"jobs", "job_nope"},
		{"admit", "job_nope", "--workspace", ws},
		{"reject", "job_nope", "--workspace", ws},
		{"quarantine", "job_nope"},
	} {
		code, out, errs := runCLI(t, env, "", args...)
		want := "[INVALID_INPUT] Unknown job handle \"job_nope\"; `coagent8 jobs` lists the jobs. (reason: job.unknown)"
		if code == ExitOK || out != "" || !strings.Contains(errs, want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", args, code, out, errs, want)
		}
	}
}

// TestRootHelpNamesDelegate: the root help offers delegate as README.md's
// opening does (it named only consult and review, read-only).
func TestRootHelpNamesDelegate(t *testing.T) {
	code, out, errs := runCLI(t, testEnv(t), "", "--help")
	for _, want := range []string{"consult, get a review from or delegate\nwork to another local coding agent",
		"sandbox whose only network is coagent8's provider gate", "quarantined until you admit it (coagent8 admit JOB)"} {
		if code != ExitOK || errs != "" || !strings.Contains(out, want) {
			t.Errorf("--help: exit %d, stderr %q; stdout lacks %q:\n%s", code, errs, want, out)
		}
	}
}

// TestRelativeStatePaths: a relative COAGENT8_DIR or COAGENT8_CONFIG
// refuses every command, before anything is read or made, naming the
// variable (INVALID_INPUT config.relative_path, exit 2); nothing is
// created in the current directory.
func TestRelativeStatePaths(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want string // substring of stderr; "" = accepted
	}{
		{"relative state dir", []string{"COAGENT8_DIR=relstate", "HOME=" + t.TempDir()}, "[INVALID_INPUT] COAGENT8_DIR must be an absolute path"},
		{"relative config", []string{"COAGENT8_DIR=" + t.TempDir(), "COAGENT8_CONFIG=rel.json", "HOME=" + t.TempDir()}, "[INVALID_INPUT] COAGENT8_CONFIG must be an absolute path"},
		{"absolute paths", []string{"COAGENT8_DIR=" + t.TempDir(), "COAGENT8_CONFIG=" + t.TempDir() + "/c.json", "HOME=" + t.TempDir()}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, _, stderr := runCLI(t, config.FromList(tt.env), "", "jobs")
			if tt.want == "" {
				if code != 0 {
					t.Errorf("exit %d, stderr %q", code, stderr)
				}
				return
			}
			entries, _ := os.ReadDir(".")
			if code != 2 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "config.relative_path") || len(entries) != 0 {
				t.Errorf("exit %d, stderr %q, %d entries made here; want exit 2 and %q", code, stderr, len(entries), tt.want)
			}
		})
	}
}
