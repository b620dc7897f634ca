package operator

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/redact"
)

type scrubInner struct {
	Text string
	IDs  map[string]string
}

type scrubPage struct {
	Rows  []scrubInner
	Ptr   *scrubInner
	Any   any
	Count int
}

// TestOperatorScrubRedactsWithoutTouchingShared: every string is
// redacted, and the values the page data shares with its sources are not
// modified.
func TestOperatorScrubRedactsWithoutTouchingShared(t *testing.T) {
	const cred = "https://bob:s3cretpass@git.example/r"
	shared := []scrubInner{{Text: cred, IDs: map[string]string{cred: cred}}}
	ptr := &scrubInner{Text: cred}
	p := page{Notice: cred, Data: scrubPage{Rows: shared, Ptr: ptr, Any: []string{cred}, Count: 3}}
	scrub(redact.NewDiagnostic(""), &p)
	d := p.Data.(scrubPage)
	for _, s := range []string{p.Notice, d.Rows[0].Text, d.Ptr.Text, d.Any.([]string)[0]} {
		if strings.Contains(s, "s3cretpass") {
			t.Errorf("not redacted: %q", s)
		}
	}
	for k, v := range d.Rows[0].IDs {
		if strings.Contains(k+v, "s3cretpass") {
			t.Errorf("map not redacted: %q=%q", k, v)
		}
	}
	if shared[0].Text != cred || shared[0].IDs[cred] != cred || ptr.Text != cred {
		t.Error("scrub modified data shared with its source")
	}
}
