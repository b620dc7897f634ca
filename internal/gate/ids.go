package gate

import "strings"

// Model and job ids are checked by hand rather than with
// regexp.MustCompile in a package variable: the bounded repetition
// {0,127} compiles to a large program at every process start (package
// init of every coagent8 run, including the sandbox helper; issue 8
// performance). ids_test.go checks equivalence with the patterns.

// validModelID reports whether s matches ^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$.
func validModelID(s string) bool { return idOf(s, "._:/[]-", 128) }

// validJobID reports whether s matches ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$.
func validJobID(s string) bool { return idOf(s, "._:-", 128) }

// idOf reports whether s is 1..max bytes, starts with an ASCII letter or
// digit and continues with ASCII letters, digits or bytes of extra.
func idOf(s, extra string, max int) bool {
	if s == "" || len(s) > max || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !alnum(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
