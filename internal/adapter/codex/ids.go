package codex

// These checks are written by hand rather than as regexp.MustCompile
// package variables: package initialisation runs at every coagent8
// process start, the sandbox helper included (issue 8 performance).
// ids_test.go checks each against its pattern.

// envKey reports whether k is a plain variable name,
// ^[A-Za-z_][A-Za-z0-9_]{0,127}$: no "*" (process.Environ would read it as
// a prefix), no "=".
func envKey(k string) bool {
	if k == "" || len(k) > 128 || isDigit(k[0]) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !isAlnum(k[i]) && k[i] != '_' {
			return false
		}
	}
	return true
}

// bareKey reports whether s matches ^[A-Za-z0-9_-]+$, the keys Codex's
// `-c key.path=value` parser accepts: it splits the path on every '.', and
// quoted TOML keys ("a.b", 'x') are rejected by 0.169.0 with "invalid
// transport" (verified). Servers whose names fall outside it are disabled
// through the thread's config object instead (see [threadConfig]);
// verification covers both.
func bareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' && s[i] != '-' {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) }
