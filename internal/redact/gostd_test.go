package redact

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestGoSourceUnchanged runs all of $GOROOT/src through the answer profile
// (issue 4 negatives): every file is byte-identical except for real PEM
// private keys, which are true positives (notes §7).
func TestGoSourceUnchanged(t *testing.T) {
	root := filepath.Join(goroot(t), "src")
	sc := newScanner(answerRules())
	var files, size int
	var keys []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		size += len(b)
		ms, _ := sc.scan(b, 0, true, nil)
		sc = newScanner(answerRules())
		for _, m := range ms {
			text := b[m.start:m.end]
			if m.kind != KindPrivateKey || !bytes.HasPrefix(text, []byte("-----BEGIN ")) || !bytes.Contains(text, []byte("-----END ")) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: %s rewrote %q", rel, m.kind, text)
				continue
			}
			keys = append(keys, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5000 || size < 50<<20 {
		t.Fatalf("walked %d files, %d bytes under %s: not the Go source tree", files, size, root)
	}
	if len(keys) > 8 {
		t.Errorf("%d private keys found, want the few known test keys: %v", len(keys), keys)
	}
	t.Logf("%d files, %.1f MiB, private-key blocks in %v", files, float64(size)/(1<<20), keys)
}

func goroot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err == nil && len(bytes.TrimSpace(out)) > 0 {
		return string(bytes.TrimSpace(out))
	}
	if r := runtime.GOROOT(); r != "" { //nolint:staticcheck // fallback only
		return r
	}
	t.Fatalf("cannot locate GOROOT: %v", err)
	return ""
}
