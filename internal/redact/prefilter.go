package redact

import "bytes"

// The answer profile's prefilter (issue 18 performance: the format scan
// was about three quarters of the gate's response check). Every answer
// detector hits only where its literal anchor starts — a token prefix,
// "eyJ"/"e30", an AWS key prefix, "bearer" in any case, "-----BEGIN " —
// and the full scan needs those bytes in the buffer (a one-shot scan is
// final, so a partial anchor at the end is no match). So a buffer holding
// no anchor has no match, and the scan of one that does can start just
// before the first anchor: what lies before it can only have contributed a
// boundary made by an escape, and an escape reaches at most escapeReach
// bytes forward. Each anchor is found by [bytes.IndexByte] (vectorised)
// of one of its rarer bytes, the probe, then compared in place; the
// scanner's per-byte trigger table runs only from there.
//
// The diagnostic profile has no prefilter: its keyword rules trigger on
// every ':' and '='.

// escapeReach bounds how far past its first byte an escape makes a left
// boundary (a CSI sequence: ESC '[' up to 30 parameter bytes and a final
// byte; see escapeEnd), with margin.
const escapeReach = 40

// anchor is one literal that starts every match of some detector.
type anchor struct {
	lit  string
	at   int  // index in lit of the probe byte
	fold bool // ASCII case-insensitive; lit is lower case
}

// prefilter holds the anchors grouped by probe byte.
type prefilter struct {
	probes []byte
	groups []*anchors // groups[k] are the anchors probed by probes[k]
	maxAt  int        // the largest anchor.at
}

// anchors share one probe byte.
type anchors struct {
	list []anchor
	// byPrev[c] are the anchors of list that the byte c may precede the
	// probe in (an anchor that starts with its probe is in every entry):
	// most probe occurrences in text find an empty entry, and the rest
	// compare only the anchors that fit their previous byte.
	byPrev [256][]anchor
}

// probeBytes are tried in order for a token prefix: punctuation is far
// rarer in text than the letters the prefixes start with.
const probeBytes = "-_."

// newPrefilter derives the anchors from tokenRules (so a new format is
// covered without a second list) plus the other answer detectors'
// literals. A token prefix without a probe byte is a bug: it would be
// missed by the prefilter.
func newPrefilter() *prefilter {
	var as []anchor
	for _, t := range tokenRules {
		at := -1
		for _, c := range []byte(probeBytes) {
			if at = bytes.LastIndexByte([]byte(t.prefix), c); at >= 0 {
				break
			}
		}
		if at < 0 {
			panic("redact: token prefix " + t.prefix + " has no prefilter probe byte")
		}
		as = append(as, anchor{lit: t.prefix, at: at})
	}
	as = append(as,
		anchor{lit: "eyJ", at: 2}, anchor{lit: "e30", at: 1}, // detectJWT
		anchor{lit: "AKIA", at: 3}, anchor{lit: "ASIA", at: 3}, anchor{lit: "ABIA", at: 3}, // detectAWS
		anchor{lit: "ACCA", at: 3}, anchor{lit: "A3T", at: 1},
		anchor{lit: "-----BEGIN ", at: 4},        // detectPEM
		anchor{lit: "bearer", at: 0, fold: true}, // detectBearer, probed by 'b' and 'B'
	)
	p := &prefilter{}
	for _, a := range minimal(as) {
		p.add(a.lit[a.at], a)
		if a.fold {
			p.add(a.lit[a.at]-'a'+'A', a)
		}
	}
	return p
}

// minimal drops anchors that contain another anchor: the shorter one is
// present wherever the longer one is ("sk-ant-" holds "sk-").
func minimal(as []anchor) []anchor {
	var out []anchor
	for i, a := range as {
		dup := false
		for j, b := range as {
			if i != j && !b.fold && !a.fold && len(b.lit) < len(a.lit) && bytes.Contains([]byte(a.lit), []byte(b.lit)) ||
				j < i && b == a {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}

func (p *prefilter) add(probe byte, a anchor) {
	k := bytes.IndexByte(p.probes, probe)
	if k < 0 {
		k = len(p.probes)
		p.probes = append(p.probes, probe)
		p.groups = append(p.groups, &anchors{})
	}
	g := p.groups[k]
	g.list = append(g.list, a)
	switch {
	case a.at == 0:
		for c := range g.byPrev {
			g.byPrev[c] = append(g.byPrev[c], a)
		}
	case a.fold:
		lo, up := lower(a.lit[a.at-1]), a.lit[a.at-1]-'a'+'A'
		g.byPrev[lo] = append(g.byPrev[lo], a)
		if up != lo {
			g.byPrev[up] = append(g.byPrev[up], a)
		}
	default:
		g.byPrev[a.lit[a.at-1]] = append(g.byPrev[a.lit[a.at-1]], a)
	}
	p.maxAt = max(p.maxAt, a.at)
}

// first returns the index of the first anchor in b, or -1 when b holds
// none (then no answer detector can match in b).
func (p *prefilter) first(b []byte) int {
	best := -1
	for k, probe := range p.probes {
		lim := len(b)
		if best >= 0 {
			lim = min(len(b), best+p.maxAt) // an earlier anchor has its probe before here
		}
		for off := 0; off < lim; {
			q := bytes.IndexByte(b[off:lim], probe)
			if q < 0 {
				break
			}
			q += off
			if s := p.groups[k].at(b, q); s >= 0 {
				if best < 0 || s < best {
					best = s
				}
				break
			}
			off = q + 1
		}
	}
	return best
}

// at returns the start of an anchor of g whose probe byte is b[q], or -1.
func (g *anchors) at(b []byte, q int) int {
	list := g.list // at the start of b any anchor can begin
	if q > 0 {
		list = g.byPrev[b[q-1]]
	}
	for i := range list {
		a := &list[i]
		s := q - a.at
		if s < 0 || len(b)-s < len(a.lit) {
			continue
		}
		if w := b[s : s+len(a.lit)]; a.fold && asciiFold(w, a.lit) || !a.fold && w[0] == a.lit[0] && string(w) == a.lit {
			return s
		}
	}
	return -1
}

// asciiFold reports whether w equals lower-case s ignoring ASCII case.
func asciiFold(w []byte, s string) bool {
	for i := range len(s) {
		if lower(w[i]) != s[i] {
			return false
		}
	}
	return true
}

// scanFrom is where a one-shot scan of b must start: 0 without a
// prefilter, len(b) when no anchor is present (nothing to scan), else
// escapeReach bytes before the first anchor.
func (rs *ruleset) scanFrom(b []byte) int {
	if rs.pre == nil {
		return 0
	}
	f := rs.pre.first(b)
	if f < 0 {
		return len(b)
	}
	return max(0, f-escapeReach)
}
