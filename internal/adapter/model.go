package adapter

import "strings"

// validModel reports whether id matches ^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$.
// It is checked by hand because compiling that bounded repetition in a
// package variable costs every coagent8 process start, the sandbox helper
// included (issue 8 performance); model_test.go checks it against the
// pattern.
func validModel(id string) bool {
	if id == "" || len(id) > 128 || !alnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if !alnum(id[i]) && strings.IndexByte("._:/[]-", id[i]) < 0 {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
