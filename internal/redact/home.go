package redact

import (
	"sort"
	"strings"
)

// homeRule rewrites the user's home directory to "~" at a path boundary
// only: with home /home/al, "/home/alice" is left alone. JSON-escaped
// spellings are matched too; Windows homes compare case-insensitively.
type homeRule struct {
	variants []string // longest first
	fold     bool
}

// newHomeRule returns nil when home cannot be matched safely: empty, the
// root, or a single path element.
func newHomeRule(home string) *homeRule {
	home = strings.TrimRight(home, `/\`)
	if len(home) < 2 || !strings.ContainsAny(home, `/\`) {
		return nil
	}
	h := &homeRule{fold: strings.Contains(home, `\`) || home[1] == ':'}
	seen := map[string]bool{}
	for _, v := range []string{
		home,
		strings.ReplaceAll(home, `\`, `\\`),
		strings.ReplaceAll(home, `/`, `\/`),
		strings.ReplaceAll(home, `\`, `/`),
	} {
		if !seen[v] {
			seen[v] = true
			h.variants = append(h.variants, v)
		}
	}
	sort.Slice(h.variants, func(a, b int) bool { return len(h.variants[a]) > len(h.variants[b]) })
	return h
}

// firstBytes returns the bytes a home occurrence can start with.
func (h *homeRule) firstBytes() []byte {
	var fs []byte
	for _, v := range h.variants {
		fs = append(fs, v[0])
		if h.fold {
			fs = append(fs, lower(v[0]), upper(v[0]))
		}
	}
	return fs
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func (h *homeRule) detect(c *cursor, i int) (match, res) {
	b := c.b
	if i > 0 && setPathChar[b[i-1]] {
		return match{}, none
	}
	for _, v := range h.variants {
		var r res
		if h.fold {
			r = litFold(c, i, strings.ToLower(v))
		} else {
			r = lit(c, i, v)
		}
		if r == more {
			return match{}, more
		}
		if r == none {
			continue
		}
		switch r := h.boundary(c, i+len(v)); r {
		case hit:
			return match{start: i, end: i + len(v), kind: KindHome}, hit
		case more:
			return match{}, more
		}
	}
	return match{}, none
}

// boundary reports whether the home path ends at e: end of input, a
// separator, or a byte that cannot continue a path element.
func (h *homeRule) boundary(c *cursor, e int) res {
	b := c.b
	if e >= len(b) {
		return needOr(c, hit)
	}
	switch ch := b[e]; {
	case ch == '/' || ch == '\\':
		return hit
	case ch == '.': // "/home/al." ends a sentence; "/home/al.bak" is another path
		if e+1 >= len(b) {
			return needOr(c, hit)
		}
		if setPathChar[b[e+1]] {
			return none
		}
		return hit
	case setPathChar[ch]:
		return none
	}
	return hit
}
