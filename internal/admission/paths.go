package admission

import (
	"bytes"
	"strconv"
	"strings"
)

// patchPaths returns every path a git patch names (old and new), parsed
// in-process so the common admission spawns no git for it. ok is false
// when a file header cannot be read unambiguously; the caller then asks
// `git apply --numstat`.
func patchPaths(patch []byte) (paths []string, ok bool) {
	for _, line := range bytes.Split(patch, []byte("\n")) {
		s := string(line)
		switch {
		case strings.HasPrefix(s, "diff --git "):
			p, ok := headerPath(strings.TrimPrefix(s, "diff --git "))
			if !ok {
				return nil, false
			}
			if p != "" {
				paths = append(paths, p)
			}
		case strings.HasPrefix(s, "rename from "), strings.HasPrefix(s, "rename to "),
			strings.HasPrefix(s, "copy from "), strings.HasPrefix(s, "copy to "):
			_, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(s, "rename "), "copy "), " ")
			p, ok := unquote(rest)
			if !ok {
				return nil, false
			}
			paths = append(paths, p)
		}
	}
	return paths, true
}

// headerPath reads "a/P b/P" (same path both sides) or the quoted form.
// A rename's header ("a/X b/Y") returns "" with ok: its rename lines name
// both paths.
func headerPath(h string) (string, bool) {
	if strings.HasPrefix(h, `"`) {
		// Quoted: two C-quoted or a quoted and a plain token.
		end := closingQuote(h)
		if end < 0 {
			return "", false
		}
		a, ok := unquote(h[:end+1])
		b, ok2 := unquote(strings.TrimPrefix(h[end+1:], " "))
		if !ok || !ok2 {
			return "", false
		}
		return samePath(a, b)
	}
	if len(h)%2 == 0 || !strings.HasPrefix(h, "a/") {
		return "", false
	}
	half := (len(h) - 1) / 2
	a, b := h[:half], h[half+1:]
	if h[half] != ' ' || !strings.HasPrefix(b, "b/") {
		return "", false
	}
	return samePath(a, b)
}

func samePath(a, b string) (string, bool) {
	a, oka := strings.CutPrefix(a, "a/")
	b, okb := strings.CutPrefix(b, "b/")
	if !oka || !okb {
		return "", false
	}
	if a != b {
		return "", true // a rename or copy: named by its own lines
	}
	return a, true
}

func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// unquote undoes git's C-style quoting ("\t", "\"", "\\", octal bytes),
// which Go's interpreted string literals share; an unquoted name is
// returned as it is.
func unquote(s string) (string, bool) {
	if !strings.HasPrefix(s, `"`) {
		return s, s != ""
	}
	u, err := strconv.Unquote(s)
	return u, err == nil
}

// renameSources returns the old paths of a patch's renames and copies.
func renameSources(patch []byte) []string {
	var out []string
	for _, line := range bytes.Split(patch, []byte("\n")) {
		for _, pre := range []string{"rename from ", "copy from "} {
			if rest, ok := strings.CutPrefix(string(line), pre); ok {
				if p, ok := unquote(rest); ok {
					out = append(out, p)
				}
			}
		}
	}
	return out
}
