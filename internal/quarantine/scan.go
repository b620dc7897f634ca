package quarantine

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/redact"
)

// ScanChange returns the structural findings of one changed path: where it
// is, what type and mode it has and where a symlink points. It reads
// nothing.
func ScanChange(c candidate.Change) []Finding {
	var out []Finding
	add := func(rule string, sev Severity, msg string) {
		out = append(out, Finding{Rule: rule, Severity: sev, Path: c.Path, Message: msg})
	}
	if r := scanPath(c.Path); r != "" {
		add(r, Block, "the path leaves the workspace or enters .git; it is not part of the patch")
	}
	if c.Kind == candidate.Deleted {
		return append(out, scanExec(c.Path)...)
	}
	switch {
	case c.Mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0:
		add(RuleSpecial, Block, "a device, FIFO or socket file; it is not part of the patch")
	case c.Mode&fs.ModeSymlink != 0 && symlinkEscapes(c.Path, c.Target):
		add(RuleSymlinkEscape, Block, "a symbolic link whose target leaves the workspace, or may (a \"..\" after a name, which another link can point anywhere)")
	case c.Mode&fs.ModeSymlink != 0 && scanPath(path.Join(path.Dir(c.Path), c.Target)) == RuleGitDir:
		// "hooks" -> ".git/hooks": whatever later writes through the link
		// (a tool, a build, the user's editor) writes the git directory.
		add(RuleSymlinkEscape, Block, "a symbolic link whose target enters .git")
	}
	if c.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		add(RuleSetuid, Block, "a setuid, setgid or sticky bit; the patch carries only the executable bit")
	}
	out = append(out, scanExec(c.Path)...)
	// A name reaches the checkout (and the next push) as content does,
	// but sits in the patch's header lines, which ScanPatch skips. The
	// findings then name the path redacted, never the credential.
	red := redact.NewAnswer()
	if k := credentialKind(red, c.Path); k != "" {
		out = append(out, Finding{Rule: RuleCredential, Severity: Block,
			Message: fmt.Sprintf("the path carries a credential (%s)", k)})
		for i := range out {
			out[i].Path = red.String(c.Path)
		}
	}
	return out
}

// scanPath returns the rule a path breaks, or "".
func scanPath(p string) string {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p ||
		p == ".." || strings.HasPrefix(p, "../") {
		return RuleOutside
	}
	for _, el := range strings.Split(p, "/") {
		// Git refuses .git in any case, and NTFS/HFS+ aliases of it; any
		// component that folds to ".git" is treated as one.
		if strings.EqualFold(strings.TrimRight(el, ". "), ".git") {
			return RuleGitDir
		}
	}
	return ""
}

// symlinkEscapes reports whether a link at p with target t can resolve
// outside the workspace. It is judged without following links, so it
// must hold whatever the other names of the tree are: a ".." after a
// named component ("b/..") counts as escaping, because the kernel
// resolves b first and b may be a link (sub/b -> ".." makes "sub/b/.."
// the workspace's parent, where the lexical "sub" is inside). What is
// left, ".." steps leading the target, climbs from the link's own
// directory, which is a real directory of the tree: it escapes when it
// climbs above the top.
func symlinkEscapes(p, t string) bool {
	if t == "" || strings.HasPrefix(t, "/") {
		return true
	}
	up, named := 0, false
	for _, el := range strings.Split(t, "/") {
		switch el {
		case "", ".":
		case "..":
			if named {
				return true
			}
			up++
		default:
			named = true
		}
	}
	depth := 0
	if d := path.Dir(p); d != "." {
		depth = strings.Count(d, "/") + 1
	}
	return up > depth
}

// execRules maps a path to a host-executing kind of file.
var execRules = []struct {
	rule, msg string
	match     func(p, base string) bool
}{
	{RuleCI, "a CI configuration change runs on the next push", func(p, b string) bool {
		return hasDir(p, ".github/workflows") || hasDir(p, ".github/actions") || hasDir(p, ".circleci") ||
			hasDir(p, ".buildkite") || b == ".gitlab-ci.yml" || b == ".travis.yml" || b == "Jenkinsfile" ||
			b == "azure-pipelines.yml" || b == "bitbucket-pipelines.yml"
	}},
	{RuleHook, "a hook manager's file runs on the next git command", func(p, b string) bool {
		return hasDir(p, ".githooks") || hasDir(p, ".husky") || b == ".pre-commit-config.yaml" || b == "lefthook.yml"
	}},
	{RuleSubmodules, "a .gitmodules change: the next `git submodule update --init` fetches submodules from the URLs and into the paths it names, code this review does not show", func(p, b string) bool {
		return p == ".gitmodules"
	}},
	{RuleAgentConfig, "a coding agent's project configuration or instructions (hooks, MCP servers, CLAUDE.md, AGENTS.md): the agent in your MCP host loads it from this directory, unsandboxed", func(p, b string) bool {
		return hasDir(p, ".claude") || hasDir(p, ".codex") || hasDir(p, ".gemini") || p == ".mcp.json" ||
			p == ".cursor/mcp.json" || p == ".vscode/mcp.json" ||
			b == "CLAUDE.md" || b == "CLAUDE.local.md" || b == "AGENTS.md" || b == "GEMINI.md"
	}},
	{RuleHostExec, "a file that tools run on the host when the directory is opened", func(p, b string) bool {
		return b == ".envrc" || hasDir(p, ".devcontainer") || p == ".vscode/tasks.json" || p == ".vscode/settings.json" ||
			p == ".vscode/launch.json"
	}},
}

func hasDir(p, dir string) bool { return strings.HasPrefix(p, dir+"/") }

func scanExec(p string) []Finding {
	var out []Finding
	for _, r := range execRules {
		if r.match(p, path.Base(p)) {
			out = append(out, Finding{Rule: r.rule, Severity: Warn, Path: p, Message: r.msg})
		}
	}
	return out
}

// attrDriver matches the .gitattributes attributes that name a driver git
// runs on the host (filter, diff, merge; textconv is set through diff).
var attrDriver = []string{"filter=", "diff=", "merge="}

// ScanPatch returns the findings of a Git patch's added lines: credentials
// (any match of the answer redaction profile) and, in a .gitattributes
// file, attributes that select a driver. Lines are 1-based patch lines.
func ScanPatch(patch []byte) []Finding {
	var out []Finding
	red := redact.NewAnswer()
	file := ""
	// A "+++ " line is a file header only between "diff --git" and the
	// first hunk: inside a hunk it is an added line whose content begins
	// "++ ", which must neither switch the file nor skip the scan.
	header := false
	for i, line := range bytes.Split(patch, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("diff --git ")):
			header = true
			continue
		case bytes.HasPrefix(line, []byte("@@")) && header:
			header = false
			continue
		case header:
			if name, ok := bytes.CutPrefix(line, []byte("+++ ")); ok {
				file = patchName(string(name))
			}
			continue
		}
		added, ok := bytes.CutPrefix(line, []byte("+"))
		if !ok {
			continue
		}
		out = append(out, scanAdded(red, file, string(added), i+1)...)
	}
	return out
}

// patchName returns the path of a "+++ " line: git C-quotes a name with a
// tab, newline, quote or (by default) non-ASCII byte, and a quoted
// ".gitattributes" must not escape the driver scan; it ends an unquoted
// name holding a space with a tab (for patch(1)), which is no part of it
// (a name's own tab is quoted).
func patchName(name string) string {
	name = strings.TrimSuffix(name, "\t")
	if strings.HasPrefix(name, `"`) {
		if u, err := strconv.Unquote(name); err == nil {
			name = u
		}
	}
	return strings.TrimPrefix(name, "b/")
}

func scanAdded(red *redact.Redactor, file, line string, n int) []Finding {
	var out []Finding
	if k := credentialKind(red, line); k != "" {
		out = append(out, Finding{Rule: RuleCredential, Severity: Block, Path: file, Line: n,
			Message: fmt.Sprintf("an added line carries a credential (%s)", k)})
	}
	if path.Base(file) == ".gitattributes" {
		if d := attrLineDriver(line); d != "" {
			out = append(out, Finding{Rule: RuleAttributes, Severity: Block, Path: file, Line: n,
				Message: "a .gitattributes line selects a " + d + " driver, which git runs on the host"})
		}
	}
	return out
}

// attrLineDriver returns the kind of driver (filter, diff, merge) one
// .gitattributes line selects, or "". A line is a comment as git reads
// it (attr.c: '#' after spaces, tabs, CRs or LFs only): a form feed or a
// no-break space before '#' starts a pattern, which is not a comment.
func attrLineDriver(line string) string {
	if strings.HasPrefix(strings.TrimLeft(line, " \t\r\n"), "#") {
		return ""
	}
	for _, d := range attrDriver {
		if strings.Contains(line, d) {
			return strings.TrimSuffix(d, "=")
		}
	}
	return ""
}

// credentialKind returns the kind of the first credential in s, or "".
func credentialKind(red *redact.Redactor, s string) string {
	r := red.String(s)
	if r == s {
		return ""
	}
	if i := strings.Index(r, "[REDACTED:"); i >= 0 {
		if j := strings.IndexByte(r[i:], ']'); j > 0 {
			return r[i+len("[REDACTED:") : i+j]
		}
	}
	return "credential"
}

// scanContent reports a credential anywhere in a binary file's content,
// which the patch carries base85-encoded where line scanning cannot see it,
// and, for a .gitattributes, each driver line: git reads that file line by
// line whatever bytes it holds, a NUL included.
func scanContent(p string, data []byte) []Finding {
	var out []Finding
	if k := credentialKind(redact.NewAnswer(), string(data)); k != "" {
		out = append(out, Finding{Rule: RuleCredential, Severity: Block, Path: p,
			Message: fmt.Sprintf("a binary file carries a credential (%s)", k)})
	}
	if path.Base(p) == ".gitattributes" {
		for _, line := range strings.Split(string(data), "\n") {
			if d := attrLineDriver(line); d != "" {
				out = append(out, Finding{Rule: RuleAttributes, Severity: Block, Path: p,
					Message: "a binary .gitattributes file has a line that selects a " + d + " driver, which git runs on the host"})
			}
		}
	}
	return out
}

// CheckPath returns the rule a patch path breaks ([RuleOutside] or
// [RuleGitDir]), or "" when the path may be written.
func CheckPath(p string) string { return scanPath(p) }
