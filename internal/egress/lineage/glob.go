package lineage

import (
	"path"
	"strings"
)

// Match reports whether the slash-separated relative path name matches
// pattern: [path.Match] per segment, plus "**" for zero or more whole
// segments. A malformed pattern matches nothing.
func Match(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(ps, ns []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for i := 0; i <= len(ns); i++ {
				if matchSegs(ps[1:], ns[i:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, err := path.Match(ps[0], ns[0]); err != nil || !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}

// ValidGlob reports whether pattern is a usable workspace glob: relative,
// slash-separated, no "." or ".." segment, every segment well-formed.
func ValidGlob(pattern string) bool {
	if pattern == "" || strings.HasPrefix(pattern, "/") || strings.Contains(pattern, "\\") {
		return false
	}
	for _, s := range strings.Split(pattern, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
		if _, err := path.Match(s, ""); err != nil {
			return false
		}
	}
	return true
}
