package evidence

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// LoadKey reads the key file at path, creating it with a fresh random key
// at epoch 1 (file mode 0600, directory 0700) when missing. The file holds
// one line "<epoch> <64 hex>". On Unix a file readable or writable by
// group or others is refused, so a leaked copy cannot be silently used.
func LoadKey(path string) (Key, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return create(path, 1)
	}
	if err != nil {
		return Key{}, fmt.Errorf("read evidence key: %w", err)
	}
	if err := private(path); err != nil {
		return Key{}, err
	}
	return parse(strings.TrimSpace(string(b)))
}

// Rotate replaces the key at path with a fresh one at the next epoch and
// returns it. Digests made under the old epoch no longer match new ones.
func Rotate(path string) (Key, error) {
	old, err := LoadKey(path)
	if err != nil {
		return Key{}, err
	}
	if err := os.Remove(path); err != nil {
		return Key{}, fmt.Errorf("rotate evidence key: %w", err)
	}
	return create(path, old.epoch+1)
}

func parse(s string) (Key, error) {
	ep, hx, ok := strings.Cut(s, " ")
	e, err := strconv.ParseUint(ep, 10, 32)
	raw, herr := hex.DecodeString(hx)
	if !ok || err != nil || herr != nil {
		return Key{}, errors.New("evidence key file is malformed (want \"<epoch> <64 hex>\")")
	}
	return NewKey(raw, uint32(e))
}

func create(path string, epoch uint32) (Key, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Key{}, fmt.Errorf("create evidence key directory: %w", err)
	}
	raw := make([]byte, 32)
	rand.Read(raw) // never fails (crypto/rand contract since Go 1.24)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Key{}, fmt.Errorf("create evidence key: %w", err)
	}
	_, err = fmt.Fprintf(f, "%d %s\n", epoch, hex.EncodeToString(raw))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Key{}, fmt.Errorf("write evidence key: %w", err)
	}
	return NewKey(raw, epoch)
}

// private refuses a key file others can read or write (Unix only: Windows
// permissions are ACLs that a mode does not describe).
func private(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat evidence key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("evidence key %s has mode %v; it must be 0600", path, st.Mode().Perm())
	}
	return nil
}
