package operator

import "os"

// readPrivate reads the credential file. Windows has no POSIX mode bits;
// the state directory's ACL (the user profile) protects the file.
func readPrivate(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, credentialIO(err)
	}
	return b, nil
}
