package candidate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

func TestChangesRefusesBadRoots(t *testing.T) {
	dirPath := t.TempDir()
	filePath := filepath.Join(t.TempDir(), "f")
	linkPath := filepath.Join(t.TempDir(), "l")
	build(t, filepath.Dir(filePath), "f f x")
	build(t, filepath.Dir(linkPath), "l l "+dirPath)
	tests := []struct{ name, lower, upper string }{
		{"lower is a file", filePath, dirPath},
		{"upper is a file", dirPath, filePath},
		{"lower missing", filepath.Join(dirPath, "missing"), dirPath},
		{"upper is a symlink to a dir", dirPath, linkPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Changes(tt.lower, tt.upper)
			wantFault(t, err, fault.InvalidInput, ReasonNotDirectory, "")
			if strings.Contains(err.Error(), dirPath) || strings.Contains(err.Error(), filePath) {
				t.Errorf("public message names a host path: %q", err.Error())
			}
		})
	}
}

func TestChangesRefusesBadUpper(t *testing.T) {
	tests := []struct {
		name         string
		lower, upper []string
		lim          Limits
		code         fault.Code
		reason, path string
	}{
		{"fifo", nil, []string{"p d/pipe"}, Limits{}, fault.InvalidInput, ReasonSpecialFile, "d/pipe"},
		{"char device 1:3", []string{"f d/null x"}, []string{"c d/null"}, Limits{}, fault.InvalidInput, ReasonSpecialFile, "d/null"},
		{"opaque value", nil, []string{"d d", "X d user.overlay.opaque=x"}, Limits{}, fault.InvalidInput, ReasonOverlayXattr, "d"},
		{"redirect", []string{"d d"}, []string{"d d", "X d user.overlay.redirect=/e"}, Limits{}, fault.InvalidInput, ReasonOverlayXattr, "d"},
		{"metacopy", []string{"f a x"}, []string{"f a x", "X a user.overlay.metacopy="}, Limits{}, fault.InvalidInput, ReasonOverlayXattr, "a"},
		{"entries", nil, []string{"f a", "f b", "f c", "f d"}, Limits{MaxEntries: 3}, fault.InputLimit, ReasonTooManyEntries, "."},
		{"entries in a deleted subtree", []string{"f d/a", "f d/b", "f d/c"}, []string{"w d"}, Limits{MaxEntries: 3}, fault.InputLimit, ReasonTooManyEntries, "d"},
		{"depth", nil, []string{"f a/b/c/d"}, Limits{MaxDepth: 2}, fault.InputLimit, ReasonTooDeep, "a/b/c"},
		{"depth in a deleted subtree", []string{"f a/b/c/d"}, []string{"w a"}, Limits{MaxDepth: 2}, fault.InputLimit, ReasonTooDeep, "a/b/c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, u := trees(t, tt.lower, tt.upper)
			got, err := ChangesLimited(l, u, tt.lim)
			wantFault(t, err, tt.code, tt.reason, tt.path)
			if !strings.Contains(err.Error(), strconv.Quote(tt.path)) {
				t.Errorf("message %q does not name %q", err.Error(), tt.path)
			}
			if got != nil {
				t.Errorf("got changes %v with an error", got)
			}
		})
	}
}

// TestChangesEntrySwappedMidWalk swaps an upper entry between its stat and
// its open (best effort against a racing writer): a directory for a symlink
// to an outside directory, and a symlink for a directory.
func TestChangesEntrySwappedMidWalk(t *testing.T) {
	outside := t.TempDir()
	build(t, outside, "f secret s")
	tests := []struct {
		name  string
		upper []string
		swap  func(p string) error
	}{
		{"dir becomes symlink", []string{"f d/a x"}, func(p string) error {
			if err := os.Rename(p, p+".away"); err != nil {
				return err
			}
			return os.Symlink(outside, p)
		}},
		{"symlink becomes dir", []string{"l d target"}, func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, u := trees(t, nil, tt.upper)
			swapped := false
			testOnlyBeforeOpen = func(rel string) {
				if rel == "d" && !swapped {
					swapped = true
					if err := tt.swap(filepath.Join(u, "d")); err != nil {
						t.Error(err)
					}
				}
			}
			defer func() { testOnlyBeforeOpen = nil }()
			got, err := Changes(l, u)
			wantFault(t, err, fault.InvalidInput, ReasonChanged, "d")
			if !swapped || got != nil {
				t.Errorf("swapped %v, got %v", swapped, got)
			}
		})
	}
}
