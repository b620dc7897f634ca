package operator

import (
	"strings"
	"testing"
)

// TestDiffLinesEscapeControls: the candidate page shows an untrusted
// patch; a bidi override (U+202E) would reorder the line the operator
// reads before admitting, and control bytes are not text.
func TestDiffLinesEscapeControls(t *testing.T) {
	for _, l := range diffLines("+x = \"\u202eadmin\u2066\"\n+\x1b[2Kok\n") {
		if strings.ContainsAny(l.Text, "\u202e\u2066\x1b") {
			t.Errorf("line %q carries a control raw", l.Text)
		}
	}
	if got, want := diffLines("+a\u202eb\n")[0], (diffLine{"add", `+a\u202eb`}); got != want {
		t.Errorf("diffLines = %+v, want %+v", got, want)
	}
}
