package redact

// Helpers shared by the detectors. Each reports more instead of guessing
// when the buffer ends before its verdict is certain and the input is not
// final.

// partialMin is the fail-closed length for a token cut by the end of input
// (max_tokens, cancel, timeout): a known anchor followed by at least this many
// token characters is redacted even if shorter than the format requires
// (notes §3, "On Close").
const partialMin = 8

// lit reports whether b[i:] starts with s: hit; a proper prefix of s at the
// end of a non-final buffer: more; else none.
func lit(c *cursor, i int, s string) res {
	b := c.b[i:]
	if len(b) >= len(s) {
		if string(b[:len(s)]) == s {
			return hit
		}
		return none
	}
	if !c.final && string(b) == s[:len(b)] {
		return more
	}
	return none
}

// litFold is [lit] ignoring ASCII case; s must be lower case.
func litFold(c *cursor, i int, s string) res {
	b := c.b[i:]
	n := min(len(b), len(s))
	for k := 0; k < n; k++ {
		if lower(b[k]) != s[k] {
			return none
		}
	}
	if n == len(s) {
		return hit
	}
	return needOr(c, none)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// needOr is the verdict when the buffer ends: more unless final, then v.
func needOr(c *cursor, v res) res {
	if c.final {
		return v
	}
	return more
}

// span advances over set from j for at most limit bytes. capped reports
// that limit was reached; eof that the run reached the end of the buffer
// first.
func span(b []byte, j int, set *byteSet, limit int) (end int, capped, eof bool) {
	lim := j + limit
	stop := min(lim, len(b))
	k := j
	for k < stop && set[b[k]] {
		k++
	}
	if k == lim {
		return k, true, false
	}
	return k, false, k == len(b)
}

func trimDots(b []byte, j, end int) int {
	for end > j && b[end-1] == '.' {
		end--
	}
	return end
}
