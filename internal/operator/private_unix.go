//go:build !windows

package operator

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/coagent8/coagent8/internal/fault"
)

// readPrivate reads the credential file at path: a regular file, not a
// symbolic link (O_NOFOLLOW) nor a FIFO or device (O_NONBLOCK, so opening
// one does not block; the type is checked on the open descriptor, so
// nothing can be swapped in between), owned by this process's user, that
// group or others cannot access.
func readPrivate(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, notItself("is a symbolic link")
	}
	if err != nil {
		return nil, credentialIO(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, credentialIO(err)
	}
	if !st.Mode().IsRegular() {
		return nil, notItself("is not a regular file")
	}
	// Another user's file, however private, holds a credential that user
	// chose; root, which may read any file, is refused it too.
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return nil, fault.New(fault.InvalidInput, "operator.credential_owner",
			fmt.Sprintf("the operator credential file belongs to uid %d, not to this user (uid %d); delete %s to generate a new one",
				sys.Uid, os.Geteuid(), CredentialFile))
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fault.New(fault.InvalidInput, "operator.credential_mode",
			fmt.Sprintf("the operator credential file has mode %v; want 0600 (chmod 600 it)", st.Mode().Perm()))
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, credentialIO(err)
	}
	return b, nil
}

func notItself(what string) error {
	return fault.New(fault.InvalidInput, "operator.credential_file",
		"the operator credential file "+what+"; it must be a regular file (delete "+CredentialFile+" to generate a new one)")
}
