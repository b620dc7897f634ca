package secret

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
)

func canary() string { return "sk-ant-" + strings.Repeat("Q", 40) }

func TestValueNeverPrints(t *testing.T) {
	v := New(canary())
	j, _ := json.Marshal(struct{ K Value }{v})
	txt, _ := v.MarshalText()
	var sb strings.Builder
	slog.New(slog.NewTextHandler(&sb, nil)).Info("x", "k", v)
	outs := []string{fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s %q %x", v, v, v, v, v, v), string(j), string(txt), sb.String()}
	for _, o := range outs {
		if strings.Contains(o, "QQQQ") || !strings.Contains(o, Placeholder) {
			t.Errorf("output %q leaks or lacks placeholder", o)
		}
	}
	if v.Reveal() != canary() || !v.Equal(New(canary())) || v.Equal(New("other")) {
		t.Error("Reveal/Equal broken")
	}
}

// TestValueInUnexportedFieldNeverPrints: a Value held in an unexported
// field (the gate's admission holds the real credential so) prints no
// byte of the secret either. fmt cannot call a method of an unexported
// field: it printed the Value's own fields by reflection, the secret as
// decimal bytes ({v:{_:[] b:[115 107 45 ...]}}), and slog's text
// handler does the same for a struct.
func TestValueInUnexportedFieldNeverPrints(t *testing.T) {
	type holder struct {
		v Value
		n []Value
	}
	h := holder{v: New(canary()), n: []Value{New(canary())}}
	var sb strings.Builder
	slog.New(slog.NewTextHandler(&sb, nil)).Info("x", "h", h)
	bytes := fmt.Sprint([]byte("QQQQ"))
	bytes = bytes[1 : len(bytes)-1] // "81 81 81 81"
	for _, o := range []string{fmt.Sprintf("%v", h), fmt.Sprintf("%+v", h), fmt.Sprintf("%#v", h), fmt.Sprintf("%v", &h), sb.String()} {
		if strings.Contains(o, "QQQQ") || strings.Contains(o, bytes) || strings.Contains(o, "0x51, 0x51") {
			t.Errorf("output %q carries the secret", o)
		}
	}
	if h.v.Reveal() != canary() || h.v.IsZero() || !(Value{}).IsZero() || (Value{}).Reveal() != "" || !h.v.Equal(New(canary())) {
		t.Error("Reveal/IsZero/Equal broken")
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  bool
	}{
		{"env:ANTHROPIC_API_KEY", "env:ANTHROPIC_API_KEY", false},
		{"file:/run/keys/a", "file:/run/keys/a", false},
		{canary(), "", true},
		{"env:", "", true},
		{"env:A-B", "", true},
		{"file:rel/path", "", true},
		{"file:/a/../b", "", true},
		{"vault:x", "", true},
	}
	for _, tt := range tests {
		got, err := ParseRef(tt.in)
		if (err != nil) != tt.err || got.String() != tt.want {
			t.Errorf("ParseRef(%q) = %q, %v; want %q, err %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "QQQQ") {
			t.Errorf("error quotes the input")
		}
	}
}

func TestResolve(t *testing.T) {
	file := filepath.Join(t.TempDir(), "k")
	os.WriteFile(file, []byte(canary()+"\n"), 0o600)
	res := Resolver{Env: config.FromList([]string{"K=" + canary()})}
	for _, ref := range []string{"env:K", "file:" + file} {
		r, _ := ParseRef(ref)
		v, err := res.Resolve(r)
		if err != nil || v.Reveal() != canary() {
			t.Errorf("Resolve(%s) = %v, %v", ref, v, err)
		}
	}
	r, _ := ParseRef("env:MISSING")
	_, err := res.Resolve(r)
	var be *BindingError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "env:MISSING") {
		t.Errorf("missing env: err = %v", err)
	}
}
