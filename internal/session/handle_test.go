package session

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/patterntest"
)

const handlePattern = `^syn_sess_[A-Za-z0-9_-]{6,80}$`

var handleCases = []string{
	"", "syn_sess_", "syn_sess_abcde", "syn_sess_abcdef", "syn_sess_ABC-_9", "syn_sess_abc.def",
	"SYN_SESS_abcdef", "syn_sess abcdef", "xsyn_sess_abcdef", "syn_sess_abcdef\n", "syn_sess_abcdeé",
	"syn_sess_" + strings.Repeat("a", 80), "syn_sess_" + strings.Repeat("a", 81), "syn_sess_abc\x00ef",
}

func TestValidHandleMatchesPattern(t *testing.T) {
	patterntest.Match(t, handleCases, patterntest.Check{Name: "validHandle", Pattern: handlePattern, Func: validHandle})
}

func FuzzValidHandle(f *testing.F) {
	patterntest.Fuzz(f, handleCases, patterntest.Check{Name: "validHandle", Pattern: handlePattern, Func: validHandle})
}
