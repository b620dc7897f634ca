package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// AddAllowedModel appends id to governance.models.allow in the config file
// at path: the one write coagent8 makes to the user's configuration, after
// an accepted elicitation with "remember".
//
// The write preserves every other key, their order and values (numbers
// byte for byte) and the file mode; only whitespace may change. It is
// atomic (temp file + rename in the same directory) and serialised with
// other writers by an OS lock on path+".lock", so concurrent remembers do
// not lose an id. A missing file is created (mode 0600). An id already
// listed (case-insensitively) leaves the file untouched. It fails with
// INVALID_INPUT for an invalid id and refuses to edit a file whose
// governance.models.allow is not a list of strings.
func AddAllowedModel(path, id string) error {
	if !policy.ValidID(id) {
		return fault.New(fault.InvalidInput, "model.invalid", "model id is not valid")
	}
	target, err := resolve(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	unlock, err := lockFile(target + ".lock")
	if err != nil {
		return fmt.Errorf("lock config: %w", err)
	}
	defer unlock()
	return addLocked(target, id)
}

// resolve follows a symlinked config to its target, so the rename replaces
// the user's file rather than the link. A dangling link (a dotfiles
// checkout whose file is not there yet) resolves to where it points: the
// loader reads through the link, so the new file must be created there,
// not over the link.
func resolve(path string) (string, error) {
	t, err := filepath.EvalSymlinks(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return t, err
	}
	for range 40 { // the kernel's own limit on a chain of links
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("read config link: %w", err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("config link %s: too many levels of symbolic links", path)
}

func addLocked(path, id string) error {
	b, mode, err := readForEdit(path)
	if err != nil {
		return err
	}
	out, changed, err := withAllowed(b, id)
	if err != nil || !changed {
		return err
	}
	return writeAtomic(path, out, mode)
}

func readForEdit(path string) ([]byte, fs.FileMode, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []byte("{}"), 0o600, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("stat config: %w", err)
	}
	b, err := readConfig(path)
	return b, fi.Mode().Perm(), err
}

// withAllowed returns doc with id appended to governance.models.allow,
// creating the objects on the way, and whether anything changed.
func withAllowed(doc []byte, id string) ([]byte, bool, error) {
	return editModels(doc, func(models object) (object, bool, error) {
		var allow []string
		if raw, ok := models.get("allow"); ok && (strictUnmarshal(raw, &allow) != nil || allow == nil) {
			return nil, false, keyErr("governance.models.allow", "must be a list of model id strings")
		}
		for _, a := range allow {
			if strings.EqualFold(a, id) {
				return nil, false, nil
			}
		}
		return models.set("allow", mustJSON(append(allow, id))), true, nil
	})
}

func mustJSON(v []string) json.RawMessage {
	b, _ := json.Marshal(v) // []string always marshals
	return b
}

// writeAtomic replaces path with b, keeping mode.
func writeAtomic(path string, b []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".config-*.tmp")
	if err != nil {
		return fmt.Errorf("create temp config: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := writeSync(tmp, b, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace config: %w", err)
	}
	syncDir(dir)
	return nil
}

func writeSync(f *os.File, b []byte, mode fs.FileMode) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write temp config: %w", err)
	}
	return nil
}
