package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
)

// generate writes files regular files of size pseudo-random text bytes (so
// git cannot deduplicate them) into ndirs directories below ws and commits
// them to a fresh repository.
func generate(ws string, files, ndirs, size int) error {
	rng := rand.New(rand.NewChaCha8([32]byte{15}))
	buf := make([]byte, size)
	for i := range files {
		d := filepath.Join(ws, dirName(i%ndirs))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for j := range buf {
			buf[j] = 'a' + byte(rng.IntN(26))
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("file%06d.txt", i)), buf, 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@127.0.0.1", "commit", "-q", "-m", "tree"},
	} {
		if err := git(ws, args...); err != nil {
			return err
		}
	}
	return nil
}

func dirName(i int) string { return fmt.Sprintf("pkg%03d", i) }

// git runs git in dir with a minimal config: no hooks, no global config,
// and no background auto-gc (it would repack .git under cp and change the
// overlay's lower tree).
func git(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %w: %s", args, err, out)
	}
	return nil
}
