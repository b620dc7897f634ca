package redact

// ruleset is the compiled form of one profile: per-byte trigger flags and
// the detectors to run at each trigger byte. It is immutable once built.
type ruleset struct {
	cls   [256]uint8      // trigger flags and cWord
	bound [256][]detector // need a left boundary
	// second[c] holds the bytes that may follow c in a bound anchor: a
	// cheap filter before any detector runs (most word starts fail it).
	second [256][4]uint64
	free   [256][]detector // run at any position
	// pre finds where a one-shot scan must start (answer profile only;
	// see prefilter.go); nil scans everything.
	pre *prefilter
}

// addBound registers d for anchors starting with c followed by any byte of
// next.
func (rs *ruleset) addBound(c byte, next string, d detector) {
	for i := 0; i < len(next); i++ {
		rs.second[c][next[i]>>6] |= 1 << (next[i] & 63)
	}
	rs.cls[c] |= fBound
	rs.bound[c] = append(rs.bound[c], d)
}

func (rs *ruleset) addFree(c byte, d detector) {
	rs.cls[c] |= fFree
	rs.free[c] = append(rs.free[c], d)
}

// newRuleset compiles the answer rules, plus the diagnostic rules when
// diag is set (home may be empty); phantom selects the gate-phantom rule
// (off only for [NewTraffic]).
func newRuleset(diag bool, home string, phantom bool) *ruleset {
	rs := &ruleset{}
	for c := range rs.cls {
		if setWord[c] {
			rs.cls[c] |= cWord
		}
	}
	for _, t := range tokenRules {
		if t.kind == KindPhantom && !phantom {
			continue
		}
		rs.addBound(t.prefix[0], t.prefix[1:2], t.detect)
	}
	rs.addBound('e', "y3", detectJWT)
	rs.addBound('A', "KSBC3", detectAWS)
	rs.addBound('B', "eE", detectBearer)
	rs.addBound('b', "eE", detectBearer)
	rs.addFree('-', detectPEM)
	for _, c := range []byte{0x1b, '\\', '%'} {
		rs.cls[c] |= fEsc
	}
	if !diag {
		rs.pre = newPrefilter()
		return rs
	}
	rs.addBound('B', "aA", detectBasic)
	rs.addBound('b', "aA", detectBasic)
	rs.addFree(':', detectURLCreds)
	rs.addFree(':', detectKeyword)
	rs.addFree('=', detectKeyword)
	if h := newHomeRule(home); h != nil {
		seen := map[byte]bool{}
		for _, c := range h.firstBytes() {
			if !seen[c] {
				seen[c] = true
				rs.addFree(c, h.detect)
			}
		}
	}
	return rs
}

// maybe reports whether a bound anchor can start at b[i]: the byte after it
// passes the second-byte filter, or the buffer ends there.
func (rs *ruleset) maybe(b []byte, i int) bool {
	if i+1 >= len(b) {
		return true
	}
	d := b[i+1]
	return rs.second[b[i]][d>>6]&(1<<(d&63)) != 0
}
