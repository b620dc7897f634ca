package price

import (
	"regexp"
	"strings"
	"sync"
)

// Patterns are compiled on first use, and the simplest are checked by
// hand, rather than compiled in package variables: package initialisation
// runs at every coagent8 process start, including the sandbox helper
// (issue 8 performance). ids_test.go checks equivalence with the patterns.

// validID reports whether s matches ^[A-Za-z0-9][A-Za-z0-9._:/\[\]-]{0,127}$:
// catalog ids are bounded to the model-id alphabet, so a hostile list
// cannot put control characters into a consent message.
func validID(s string) bool {
	if s == "" || len(s) > 128 || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !alnum(s[i]) && strings.IndexByte("._:/[]-", s[i]) < 0 {
			return false
		}
	}
	return true
}

// oSeries reports whether s matches ^o[0-9] (OpenAI's o1, o3, o4-mini...).
func oSeries(s string) bool { return len(s) >= 2 && s[0] == 'o' && '0' <= s[1] && s[1] <= '9' }

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

var (
	// priceRE accepts plain decimals and small exponents only: big.Rat would
	// otherwise expand "1e999999999" into a huge number.
	priceRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9]{1,12}(\.[0-9]{1,24})?([eE][-+]?[0-9]{1,2})?$`)
	})
	// dateRE matches dated snapshot suffixes: -20250929, -2025-08-07, -0528.
	dateRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$`)
	})
	// routingRE matches OpenRouter routing variants, accepted on any id but
	// never listed; the provider (and so the price) may vary.
	routingRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(:(nitro|floor|exacto|online))+$`)
	})
)
