package adapter

// IsUUID reports whether s is a UUID in its canonical text form,
// ^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$:
// the shape of every backend's session or thread id, checked before an id
// can reach argv or a protocol message (backends.md §2, §3). Checked by
// hand: a regexp in a package variable compiles at every process start
// (issue 8 performance); ids_test.go checks the equivalence.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return false
		}
	}
	return true
}
