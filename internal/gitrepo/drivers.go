package gitrepo

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// ReasonConfig is the reason of a repository whose configuration git
// cannot list (a refusal: its drivers could not be neutralized).
const ReasonConfig = "git.config"

// driverKeys are the configuration keys, per section, whose value is a
// command a content operation runs: filter drivers (update-index from a
// work tree, checkout-index), diff drivers and merge drivers (apply
// --3way). A .gitattributes file, the candidate's included once a patch
// is in a scratch index, chooses which driver runs on which path; the
// command itself comes from configuration. An empty value makes git skip
// the driver (filter: the content passes unchanged; merge: the built-in
// text merge; diff: no textconv / external diff).
var driverKeys = map[string][]string{
	"filter": {"clean", "smudge", "process"},
	"diff":   {"textconv", "command"},
	"merge":  {"driver"},
}

// neutralEnv lists the repository's effective configuration (global and
// repository scopes: the system scope is off) and returns GIT_CONFIG_COUNT
// entries that set every driver command found to "" (and a filter's
// required to false): coagent8's host git
// calls run no program named by configuration, whoever wrote it (issue 15
// scope 1). GIT_CONFIG_KEY_n carries a name verbatim, so a subsection
// holding '=' or '.' cannot be misparsed as -c would. Failure to list is
// PROCESS_ERROR git.config: nothing runs over a configuration that
// was not read.
func (r *Repo) neutralEnv(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, r.Top, r.env, nil, "config", "--list", "--name-only", "-z")
	if err != nil && ExitCode(err) != 1 { // 1: no configuration at all
		return nil, fault.Wrap(fault.ProcessError, ReasonConfig, "The repository's Git configuration cannot be read.", err)
	}
	var kvs [][2]string
	seen := map[string]bool{}
	add := func(k, v string) {
		if !seen[k] {
			seen[k] = true
			kvs = append(kvs, [2]string{k, v})
		}
	}
	for _, name := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if k := string(name); isDriverKey(k) {
			add(k, "")
			if strings.HasPrefix(k, "filter.") {
				// A required filter without a command is a fatal
				// error (Git LFS sets required): the content passes
				// raw instead, as gitscope does.
				add(k[:strings.LastIndexByte(k, '.')]+".required", "false")
			}
		}
	}
	if len(kvs) == 0 {
		return nil, nil
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(kvs))}
	for i, kv := range kvs {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return env, nil
}

// isDriverKey reports whether name (section.subsection.key as git
// --name-only prints it: section and key lower-cased) is a driver command.
func isDriverKey(name string) bool {
	sec, rest, ok := strings.Cut(name, ".")
	i := strings.LastIndexByte(rest, '.')
	if !ok || i <= 0 {
		return false
	}
	for _, k := range driverKeys[sec] {
		if rest[i+1:] == k {
			return true
		}
	}
	return false
}

// driverFree are plumbing commands that convert no content and so run no
// driver whatever the attributes say (flags that would, below, excepted):
// the quarantine's build uses only these, sparing the configuration
// listing a process.
var driverFree = map[string]bool{"rev-parse": true, "config": true, "ls-files": true, "ls-tree": true,
	"write-tree": true, "mktree": true, "read-tree": true, "diff-tree": true, "update-index": true, "cat-file": true}

// outsideEnv is added to a command run outside the repository
// (GIT_CEILING_DIRECTORIES in extra: the admission's fast path applies a
// patch in a staging directory). Without a repository git still reads the
// user's global configuration and global attributes (core.attributesFile,
// else $XDG_CONFIG_HOME/git/attributes), and `git apply` there runs the
// clean and smudge filters they select; so such a command reads neither,
// and needs no configuration listing to neutralize drivers.
var outsideEnv = []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_COUNT=1",
	"GIT_CONFIG_KEY_0=core.attributesFile", "GIT_CONFIG_VALUE_0=/dev/null"}

// outside reports whether extra runs a command outside the repository.
func outside(extra []string) bool {
	return slices.ContainsFunc(extra, func(e string) bool { return strings.HasPrefix(e, "GIT_CEILING_DIRECTORIES=") })
}

// noDrivers reports whether a command cannot run a filter, diff or merge
// driver: a driverFree command without a flag that converts content
// (read-tree -u/-m, update-index reading the work tree, cat-file
// --filters/--textconv, diff-tree --textconv/--ext-diff), or a command
// run [outside] the repository (it reads no configuration: outsideEnv).
func noDrivers(args, extra []string) bool {
	if outside(extra) {
		return true
	}
	if len(args) == 0 || !driverFree[args[0]] {
		return false
	}
	for _, a := range args[1:] {
		switch {
		case a == "-u" || a == "-m" || a == "--filters" || a == "--textconv" || a == "--ext-diff" || a == "--add" || a == "--stdin" || a == "--again":
			return false
		case args[0] == "update-index" && !strings.HasPrefix(a, "-"):
			return false // a path: hashed from the work tree
		}
	}
	return true
}
