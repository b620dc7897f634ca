package operator

// checkPrivate: Windows has no POSIX mode bits; the state directory's ACL
// (the user profile) protects the file.
func checkPrivate(string) error { return nil }
