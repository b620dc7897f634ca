package sandboxrun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// checkHostPaths reports a relative or missing --input, --ro,
// --artifacts-out or command path with the flag and the path it names (the
// sandbox's own admission, which checks much more, names neither).
func checkHostPaths(o Options, command string) error {
	paths := [][2]string{{"--input", o.spec.Input}, {"--artifacts-out", o.spec.ArtifactsTo}}
	for _, p := range o.spec.ReadOnly {
		paths = append(paths, [2]string{"--ro", p})
	}
	for _, p := range paths {
		if err := hostPathExists(p[0], p[1]); err != nil {
			return err
		}
	}
	if command != "" && !filepath.IsAbs(command) {
		msg := fmt.Sprintf("the command %q: give its absolute path (there is no PATH lookup)", command)
		if found, err := exec.LookPath(command); err == nil {
			if real, err := filepath.EvalSymlinks(found); err == nil {
				if real, err = filepath.Abs(real); err == nil {
					msg += fmt.Sprintf(", e.g. %s", real)
				}
			}
		}
		return UsageError{reasonPath, errors.New(msg)}
	}
	return hostPathExists("the command", command)
}

// reasonPath is the sandbox admission's reason for a host path it refuses.
const reasonPath = "sandbox.path"

func hostPathExists(what, path string) error {
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) {
		return UsageError{reasonPath, fmt.Errorf("%s %q: must be an absolute path", what, path)}
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return UsageError{reasonPath, fmt.Errorf("%s %q: no such file or directory", what, path)}
	}
	return nil
}
