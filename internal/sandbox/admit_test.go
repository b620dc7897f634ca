package sandbox

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

func TestCheckPath(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"/usr/bin/true", true}, {"/", true},
		{"", false}, {"bin/sh", false}, {"/usr/bin/../bin/sh", false}, {"/usr/bin/sh\n", false},
		{"/usr/bin/sh\x00x", false}, {"/usr//bin", false}, {"/usr/bin/", false}, {"/a/./b", false},
		{"/\x1b[31m", false}, {"/" + strings.Repeat("a", 5000), false},
	}
	for _, tt := range tests {
		err := CheckPath(tt.in)
		if got := err == nil; got != tt.ok {
			t.Errorf("CheckPath(%q) = %v, want ok %v", tt.in, err, tt.ok)
		}
		if err != nil && !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("CheckPath(%q) error %v is not INVALID_INPUT", tt.in, err)
		}
	}
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"/usr/bin/true", "/a/../b", "/a\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckPath(p) != nil {
			return
		}
		// Property: an accepted path is absolute, clean and free of ".."
		// and control bytes.
		if p[0] != '/' || hasControl(p) || strings.Contains("/"+p+"/", "/../") {
			t.Fatalf("accepted %q", p)
		}
	})
}

func TestCheckArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		ok   bool
	}{
		{"shell metacharacters are literal", []string{"$(id)", ";", "a\nb", "\x1b[31m"}, true},
		{"NUL", []string{"a\x00b"}, false},
		{"too many", make([]string, maxArgs+1), false},
		{"too long", []string{strings.Repeat("a", maxArgLen+1)}, false},
	}
	for _, tt := range tests {
		if got := checkArgs(tt.args) == nil; got != tt.ok {
			t.Errorf("%s: ok = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func TestBuildEnv(t *testing.T) {
	env, removed, err := buildEnv([]string{"GOFLAGS=-mod=mod", "ANTHROPIC_API_KEY=x", "MY_TOKEN=y",
		"LD_PRELOAD=/x.so", "aws_secret_access_key=z", "PATH=/opt/go/bin:/usr/bin", "NODE_OPTIONS=--require x"})
	if err != nil {
		t.Fatal(err)
	}
	wantEnv := []string{"GOFLAGS=-mod=mod", "HOME=/job/scratch", "LANG=C.UTF-8", "PATH=/opt/go/bin:/usr/bin", "TMPDIR=/tmp"}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	wantRemoved := []string{"ANTHROPIC_API_KEY", "LD_PRELOAD", "MY_TOKEN", "NODE_OPTIONS", "aws_secret_access_key"}
	if diff := cmp.Diff(wantRemoved, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"NOEQUALS", "1X=2", "A B=c"} {
		if _, _, err := buildEnv([]string{bad}); !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("buildEnv(%q) = %v, want INVALID_INPUT", bad, err)
		}
	}
}

func TestLimitsDefaultsAndBounds(t *testing.T) {
	l, err := Limits{}.withDefaults()
	if err != nil || l.Memory != 512<<20 || l.Pids != 256 || l.CPU != 1000 {
		t.Fatalf("defaults %+v %v", l, err)
	}
	for _, bad := range []Limits{{Memory: 1}, {Pids: 1 << 20}, {Wall: -1}, {Output: -1}} {
		if _, err := bad.withDefaults(); !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestExitClassNames(t *testing.T) {
	for c := ExitExited; c <= ExitUncertain; c++ {
		var back ExitClass
		b, _ := c.MarshalText()
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("%v round trip = %v %v", c, back, err)
		}
	}
}

func TestNewRejectsLowerLandlockFloor(t *testing.T) {
	if _, err := New(Config{StateDir: "/x", MinLandlockABI: 5}); !fault.HasCode(err, fault.InvalidInput) {
		t.Errorf("New accepted a Landlock floor below %d: %v", MinLandlockABI, err)
	}
	if _, err := New(Config{StateDir: "relative"}); err == nil {
		t.Error("New accepted a relative state dir")
	}
}
