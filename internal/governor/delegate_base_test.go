package governor

import "testing"

// TestRevText: only a plausible revision reaches git; an option, a space,
// a control character or an oversized string is refused before it.
func TestRevText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", true}, {"HEAD", true}, {"main", true}, {"HEAD~1", true}, {"v1.2^{commit}", true}, {"0123abcd", true},
		{"-h", false}, {"--output=/tmp/x", false}, {"a b", false}, {"a\tb", false}, {"a\x00b", false}, {"a\nb", false},
		{"\u202e", false}, {string(make([]byte, maxBaseBytes+1)), false}, {"\xff", false},
	} {
		if got := revText(tc.in); got != tc.want {
			t.Errorf("revText(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
