package gate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/secret"
)

// PhantomPrefix starts every phantom credential, so a provider key presented
// instead is recognised without comparing it to anything.
const PhantomPrefix = "c8g_"

// newPhantom returns a fresh phantom credential: 256 random bits.
func newPhantom() secret.Value {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand contract since Go 1.24)
	return secret.New(PhantomPrefix + base64.RawURLEncoding.EncodeToString(b))
}

// Key is the local HMAC key that phantom credentials are stored under, so a
// copy of the database alone cannot test guesses offline.
type Key struct {
	k []byte
}

// digest returns the keyed hash of a presented credential.
func (k Key) digest(cred string) []byte {
	m := hmac.New(sha256.New, k.k)
	m.Write([]byte("coagent8 gate phantom v1\x00"))
	m.Write([]byte(cred))
	return m.Sum(nil)
}

// LoadKey reads the 32-byte key at path, creating it (mode 0600, directory
// 0700) when missing. A key file readable by group or others is refused.
func LoadKey(path string) (Key, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return Key{}, fmt.Errorf("read gate key: %w", err)
	}
	if err := checkPrivate(path); err != nil {
		return Key{}, err
	}
	if len(b) != 32 {
		return Key{}, fmt.Errorf("gate key %s: want 32 bytes, have %d", path, len(b))
	}
	return Key{k: b}, nil
}

func createKey(path string) (Key, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Key{}, fmt.Errorf("create gate key directory: %w", err)
	}
	b := make([]byte, 32)
	rand.Read(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadKey(path) // another process won the race
	}
	if err != nil {
		return Key{}, fmt.Errorf("create gate key: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return Key{}, fmt.Errorf("write gate key: %w", err)
	}
	return Key{k: b}, f.Sync()
}

// credentialOf returns the credential a request presents in x-api-key or
// Authorization: Bearer. Both present and different is ambiguous and
// returns ok=false.
func credentialOf(apiKey, authorization string) (cred string, ok bool) {
	bearer, hasBearer := strings.CutPrefix(authorization, "Bearer ")
	if authorization != "" && !hasBearer {
		return "", false
	}
	switch {
	case apiKey != "" && bearer != "" && apiKey != bearer:
		return "", false
	case apiKey != "":
		return apiKey, true
	}
	return bearer, true
}

// looksLikeProviderKey reports whether cred has the shape of a real provider
// API key rather than a phantom credential (no comparison with any secret).
func looksLikeProviderKey(cred string) bool {
	return strings.HasPrefix(cred, "sk-") || strings.HasPrefix(cred, "sess-")
}
