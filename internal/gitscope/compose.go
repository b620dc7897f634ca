package gitscope

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxListed bounds each path list in the snapshot header.
const maxListed = 200

// compose builds Snapshot.Text: a header naming the scope, the commit and
// every path that is not inlined, then the sections, cut to SnapshotBudget.
func (c *collector) compose() {
	s := &c.snap
	var b strings.Builder
	fmt.Fprintf(&b, "Scope: %s\n", s.Description)
	commit := s.Commit
	if commit == "" {
		commit = "(no commit yet)"
	}
	fmt.Fprintf(&b, "Snapshot commit: %s\n", commit)
	list(&b, "Excluded from inline diffs (build output, source maps, lock files; listed so changes stay visible)", s.Excluded)
	list(&b, "Binary files (listed, not inlined)", s.Binary)
	list(&b, "Untracked files not inlined", s.Omitted)
	b.WriteString("\n")
	b.WriteString(strings.Join(c.sections, "\n\n"))
	text := strings.ToValidUTF8(b.String(), "\uFFFD")
	if len(text) > SnapshotBudget {
		text = cutAtLine(text, SnapshotBudget) + "\n" + BudgetWarning
		s.Incomplete = true
	}
	s.Text = text
}

func list(b *strings.Builder, title string, paths []string) {
	if len(paths) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n", title)
	for i, p := range paths {
		if i == maxListed {
			fmt.Fprintf(b, "  … and %d more\n", len(paths)-maxListed)
			break
		}
		fmt.Fprintf(b, "  %s\n", p)
	}
}

// cutAtLine returns the longest prefix of s within limit bytes ending at a
// line break (or a UTF-8 boundary if the first line is too long).
func cutAtLine(s string, limit int) string {
	cut := s[:limit]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		return cut[:i]
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit]
}
