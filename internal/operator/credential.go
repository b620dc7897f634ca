package operator

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/secret"
)

// User is the fixed user name of the operator's Basic credential.
const User = "operator"

// CredentialFile is the credential's file name in the state directory.
const CredentialFile = "operator.credential"

// credentialBytes is the credential's entropy: 32 random bytes, 256 bits,
// above R-084's floor of 128.
const credentialBytes = 32

// Credential is the operator's HTTP Basic credential: [User] and a
// password of 32 random bytes in unpadded base64url (43 characters). The
// password is a [secret.Value]: it prints as a placeholder.
type Credential struct {
	password secret.Value
}

// Password returns the password (print it only to the operator's own
// terminal).
func (c Credential) Password() secret.Value { return c.password }

// LoadOrCreateCredential returns the credential stored in
// stateDir/operator.credential, creating it (mode 0600, directory 0700)
// when absent; created reports whether this call made it, so the caller
// shows it once. A file that is group- or world-accessible, or whose
// content is not a credential of full strength, is refused: a
// *fault.Error INVALID_INPUT with reason operator.credential_mode or
// operator.credential_weak. The file is never rewritten.
func LoadOrCreateCredential(stateDir string) (c Credential, created bool, err error) {
	c, err = ReadCredential(stateDir)
	if !errors.Is(err, fs.ErrNotExist) {
		return c, false, err
	}
	return createCredential(filepath.Join(stateDir, CredentialFile))
}

// ReadCredential returns the stored credential (`coagent8 operator
// credential`). A file that cannot be read is a *fault.Error
// PROCESS_ERROR, reason operator.credential_io, wrapping the cause (a
// missing file: [fs.ErrNotExist]); a loose mode or weak content is refused
// as in [LoadOrCreateCredential], and so is a file that is not a regular
// file (a symbolic link, a FIFO): INVALID_INPUT operator.credential_file.
func ReadCredential(stateDir string) (Credential, error) {
	b, err := readPrivate(filepath.Join(stateDir, CredentialFile))
	if err != nil {
		return Credential{}, err
	}
	return parseCredential(strings.TrimSpace(string(b)))
}

// parseCredential accepts exactly the generated form: unpadded base64url
// of 32 bytes.
func parseCredential(s string) (Credential, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) != credentialBytes {
		return Credential{}, fault.New(fault.InvalidInput, "operator.credential_weak",
			"the operator credential file does not hold a 256-bit generated credential; delete "+CredentialFile+" to generate a new one")
	}
	return Credential{password: secret.New(s)}, nil
}

func createCredential(path string) (Credential, bool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Credential{}, false, credentialIO(err)
	}
	b := make([]byte, credentialBytes)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	s := base64.RawURLEncoding.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		c, err := ReadCredential(filepath.Dir(path)) // another process won the race
		return c, false, err
	}
	if err != nil {
		return Credential{}, false, credentialIO(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s + "\n"); err != nil {
		return Credential{}, false, credentialIO(err)
	}
	if err := f.Sync(); err != nil {
		return Credential{}, false, credentialIO(err)
	}
	return Credential{password: secret.New(s)}, true, nil
}

// credentialIO types a failure to read or write the credential file; the
// cause (with its path) stays internal.
func credentialIO(err error) error {
	return fault.Wrap(fault.ProcessError, "operator.credential_io",
		"the operator credential file in the state directory could not be read or written (check its permissions)", err)
}
