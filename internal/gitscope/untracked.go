package gitscope

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// untracked adds untracked, non-ignored files under the workspace as
// new-file diffs. Only regular files inside the workspace by realpath and
// at most UntrackedLimit bytes are read; binary files are listed.
func (c *collector) untracked(ctx context.Context) error {
	out, _, err := c.g.run(ctx, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, rel := range strings.Split(out, "\x00") {
		if rel == "" {
			continue
		}
		if b.Len() > SnapshotBudget {
			c.snap.Omitted = append(c.snap.Omitted, rel+" (snapshot budget reached)")
			continue
		}
		c.addUntracked(&b, rel)
	}
	text := b.String()
	if text == "" {
		text = "(no untracked files shown)"
	}
	c.sections = append(c.sections, "=== Untracked files ===\n"+strings.TrimRight(text, "\n"))
	return nil
}

func (c *collector) addUntracked(b *strings.Builder, rel string) {
	if excluded(rel) {
		c.snap.Excluded = appendNew(c.snap.Excluded, rel)
		return
	}
	data, why := c.readInside(rel)
	switch {
	case why != "":
		c.snap.Omitted = append(c.snap.Omitted, rel+" ("+why+")")
	case bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0:
		c.snap.Binary = append(c.snap.Binary, rel)
	default:
		writeNewFile(b, rel, data)
	}
}

// readInside reads rel if it is a regular file inside the workspace by
// realpath and within UntrackedLimit; otherwise why says what it is.
func (c *collector) readInside(rel string) (data []byte, why string) {
	full := filepath.Join(c.root, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, "not a regular file"
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil || !inside(c.root, real) {
		return nil, "outside the workspace"
	}
	if fi.Size() > UntrackedLimit {
		return nil, "larger than 256 KiB"
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, "unreadable"
	}
	defer f.Close()
	// Read one byte past the limit: the file may have grown since Lstat.
	data, err = io.ReadAll(io.LimitReader(f, UntrackedLimit+1))
	switch {
	case err != nil:
		return nil, "unreadable"
	case len(data) > UntrackedLimit:
		return nil, "larger than 256 KiB"
	}
	return data, ""
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// writeNewFile renders data as a unified diff adding the file.
func writeNewFile(b *strings.Builder, rel string, data []byte) {
	text := strings.TrimSuffix(string(data), "\n")
	lines := strings.Split(text, "\n")
	if text == "" {
		lines = nil
	}
	fmt.Fprintf(b, "diff --git a/%s b/%s\nnew file (untracked)\n--- /dev/null\n+++ b/%s\n", rel, rel, rel)
	if len(lines) > 0 {
		fmt.Fprintf(b, "@@ -0,0 +1,%d @@\n", len(lines))
	}
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
}
