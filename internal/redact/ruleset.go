package redact

// ruleset is the compiled form of one profile: per-byte trigger flags and
// the detectors to run at each trigger byte. It is immutable once built.
type ruleset struct {
	trig  [256]uint8
	bound [256][]detector // need a left boundary
	free  [256][]detector // run at any position
}

func (rs *ruleset) addBound(c byte, d detector) {
	rs.trig[c] |= fBound
	rs.bound[c] = append(rs.bound[c], d)
}

func (rs *ruleset) addFree(c byte, d detector) {
	rs.trig[c] |= fFree
	rs.free[c] = append(rs.free[c], d)
}

// newRuleset compiles the answer rules, plus the diagnostic rules when
// diag is set (home may be empty).
func newRuleset(diag bool, home string) *ruleset {
	rs := &ruleset{}
	for _, t := range tokenRules {
		rs.addBound(t.prefix[0], t.detect)
	}
	rs.addBound('e', detectJWT)
	rs.addBound('A', detectAWS)
	rs.addBound('B', detectBearer)
	rs.addBound('b', detectBearer)
	rs.addFree('-', detectPEM)
	for _, c := range []byte{0x1b, '\\', '%'} {
		rs.trig[c] |= fEsc
	}
	if !diag {
		return rs
	}
	rs.addBound('B', detectBasic)
	rs.addBound('b', detectBasic)
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
