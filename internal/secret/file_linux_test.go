package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileRefusesWhatIsNotACredentialFile: files that are regular
// but cannot be one credential are refused with what to fix, never read
// into a value (carried item: file:/proc/self/environ could be declared
// and sent as a key).
func TestReadFileRefusesWhatIsNotACredentialFile(t *testing.T) {
	nul := filepath.Join(t.TempDir(), "nul")
	if err := os.WriteFile(nul, []byte("A=1\x00B=2\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"/proc/self/environ", "a file of the kernel"},
		{"/proc/self/status", "a file of the kernel"},
		{"/sys/kernel/mm/transparent_hugepage/enabled", "a file of the kernel"},
		{nul, "NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Fatalf("the test file is not here: %v", err)
			}
			ref, err := ParseRef("file:" + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Resolver{}.Resolve(ref)
			var be *BindingError
			if !errors.As(err, &be) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Resolve(%s) = %v, %v; want a BindingError saying %q", ref, v.IsZero(), err, tt.want)
			}
		})
	}
}
