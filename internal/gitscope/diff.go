package gitscope

import (
	"context"
	"strings"
)

// diffFlags apply to every diff and show (contract.md §4).
var diffFlags = []string{"--no-color", "--unified=1", "--no-ext-diff", "--no-textconv"}

// excludes are paths left out of inline diffs; they are listed by name
// instead (AUD-P1-10). Git pathspec semantics: "*" also matches "/".
var excludes = []string{"dist/**", "*.map", "*-lock.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock"}

func (c *collector) diff(ctx context.Context, s section) error {
	pathspec := []string{"."}
	for _, e := range excludes {
		pathspec = append(pathspec, ":(exclude)"+e)
	}
	out, cut, err := c.g.run(ctx, s.argv(nil, pathspec)...)
	if err != nil {
		return err
	}
	if cut {
		out += "\n" + BufferWarning
		c.snap.Incomplete = true
	}
	c.snap.Binary = append(c.snap.Binary, binaries(out)...)
	if err := c.listExcluded(ctx, s); err != nil {
		return err
	}
	if strings.TrimSpace(out) == "" {
		out = "(no changes)"
	}
	c.sections = append(c.sections, "=== "+s.title+" ===\n"+strings.TrimRight(out, "\n"))
	return nil
}

// argv is: sub, the common flags, the section's and extra flags, then the
// revisions after --end-of-options (a validated ref still can never be read
// as an option), then the pathspec after "--".
func (s section) argv(extra, pathspec []string) []string {
	a := append([]string{s.sub}, diffFlags...)
	a = append(append(a, s.flags...), extra...)
	a = append(append(a, "--end-of-options"), s.revs...)
	return append(append(a, "--"), pathspec...)
}

// listExcluded records the excluded paths the same diff touches.
func (c *collector) listExcluded(ctx context.Context, s section) error {
	extra := []string{"-z", "--name-only"}
	if s.sub == "show" {
		extra = append(extra, "--format=")
	}
	names, _, err := c.g.run(ctx, s.argv(extra, excludes)...)
	if err != nil {
		return err
	}
	for _, n := range strings.Split(names, "\x00") {
		if n = strings.TrimSpace(n); n != "" {
			c.snap.Excluded = appendNew(c.snap.Excluded, n)
		}
	}
	return nil
}

// binaries returns the paths of "Binary files a/x and b/x differ" lines.
func binaries(diff string) []string {
	var out []string
	for _, line := range strings.Split(diff, "\n") {
		rest, ok := strings.CutPrefix(line, "Binary files ")
		if !ok || !strings.HasSuffix(rest, " differ") {
			continue
		}
		a, b, _ := strings.Cut(strings.TrimSuffix(rest, " differ"), " and ")
		if b == "/dev/null" {
			b = a
		}
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(b, "b/"), "a/"))
	}
	return out
}

func appendNew(list []string, items ...string) []string {
	seen := map[string]bool{}
	for _, s := range list {
		seen[s] = true
	}
	for _, s := range items {
		if !seen[s] {
			seen[s], list = true, append(list, s)
		}
	}
	return list
}

// excluded reports whether a workspace-relative slash path matches excludes.
func excluded(rel string) bool {
	switch rel {
	case "package-lock.json", "pnpm-lock.yaml", "yarn.lock":
		return true
	}
	return strings.HasPrefix(rel, "dist/") || strings.HasSuffix(rel, ".map") || strings.HasSuffix(rel, "-lock.json")
}
