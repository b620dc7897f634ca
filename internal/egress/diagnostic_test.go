package egress

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnosticRecording covers:
// capacity 2 uses / 1000 bytes, 600-byte candidates.
func TestDiagnosticRecording(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, baseConfig())
	dir := filepath.Join(t.TempDir(), "reports")
	r, err := NewDiagnosticRecorder(f.d, dir)
	if err != nil {
		t.Fatal(err)
	}
	cand := []byte(`{"report":"` + strings.Repeat("d", 600-13) + `"}`)
	for _, bad := range [][]byte{cand[:len(cand)-1], []byte(`{ "report": "x" }`), []byte(`{"b":1,"a":2}`)} {
		if _, err := r.Claim(ctx, bad); reasonOf(err) != "egress.diagnostic_noncanonical" {
			t.Errorf("%q: %v", bad[:min(len(bad), 20)], err)
		}
	}
	act, err := r.Claim(ctx, cand)
	if err != nil {
		t.Fatal(err)
	}
	copied := act
	path, err := act.Record(cand)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(cand) {
		t.Error("recorder did not receive exactly the candidate bytes")
	}
	if _, err := copied.Record(cand); reasonOf(err) != ReasonSpent {
		t.Errorf("copied activation: %v", err)
	}
	if _, err := r.Claim(ctx, cand); reasonOf(err) != ReasonBytesExhausted {
		t.Errorf("second 600-byte claim: %v", err)
	}
	small := []byte(`{"r":1}`)
	act, err = r.Claim(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	st := f.d.cur.Load()
	c := baseConfig()
	c.DefaultClassification = 0.01
	f.d.SetPolicy(mustPolicy(t, c), st.src) // policy revoked between claim and activation
	if _, err := act.Record(small); reasonOf(err) != ReasonPolicyChanged {
		t.Errorf("record after policy change: %v", err)
	}
	f.d.SetPolicy(st.p, st.src)
	if _, err := r.Claim(ctx, small); reasonOf(err) != ReasonUsesExhausted {
		t.Errorf("no refund after the refused recording: %v", err)
	}
}
