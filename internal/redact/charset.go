package redact

// byteSet is a membership table over bytes; lookups are one load.
type byteSet [256]bool

func newSet(spans ...string) *byteSet {
	var s byteSet
	for _, sp := range spans {
		if len(sp) == 3 && sp[1] == '-' && sp[0] < sp[2] { // a range such as "a-z"
			for c := int(sp[0]); c <= int(sp[2]); c++ {
				s[c] = true
			}
			continue
		}
		for i := 0; i < len(sp); i++ {
			s[sp[i]] = true
		}
	}
	return &s
}

// Character classes used by the rules. Names say what they admit.
var (
	setWord     = newSet("A-Z", "a-z", "0-9")                         // left/right boundary
	setAlnum    = setWord                                             // base62 bodies
	setTok      = newSet("A-Z", "a-z", "0-9", "_-")                   // base64url
	setTokDot   = newSet("A-Z", "a-z", "0-9", "_-.")                  // dotted OAuth tokens
	setWordU    = newSet("A-Z", "a-z", "0-9", "_")                    // GitHub classic
	setSlack    = newSet("A-Z", "a-z", "0-9", "-")                    // Slack
	setHook     = newSet("A-Z", "a-z", "0-9", "_/")                   // Slack webhook path
	setB64Token = newSet("A-Z", "a-z", "0-9", "-._~+/=")              // RFC 6750 b64token
	setB64Std   = newSet("A-Z", "a-z", "0-9", "+/=")                  // RFC 4648 §4
	setAWS      = newSet("A-Z", "2-7")                                // base32 body
	setUpperNum = newSet("A-Z", "0-9")                                // AWS A3T? byte
	setPEMLabel = newSet("A-Z", "0-9", " ")                           // PEM type label
	setPEMBody  = newSet("A-Z", "a-z", "0-9", "+/=._~-", "\r\n\\")    // body, raw or \n-escaped; every token byte, so a cut block never ends inside a word
	setKey      = newSet("A-Z", "a-z", "0-9", "_-")                   // keyword key run
	setSpace    = newSet(" \t")                                       // inline whitespace
	setHex      = newSet("0-9", "a-f", "A-F")                         // escapes
	setPathChar = newSet("A-Z", "a-z", "0-9", "_-.~")                 // home boundary
	setAuthorty = newSet("A-Z", "a-z", "0-9", "-._~%!$&'()*+,;=:@[]") // URL authority
)

// valueStop ends an unquoted keyword value: whitespace, quotes, escapes and
// the delimiters that close assignments in env lines, URLs, JSON and code.
var valueStop = newSet(" \t\r\n", `"'`+"`", `\,;(){}[]<>&|`)

// quoteEnd[q] ends a value quoted by q: the quote itself, a backslash (start
// of an escape: never run a capture through it) or a line end.
var quoteEnd = map[byte]*byteSet{
	'"':  newSet(`"\`, "\r\n"),
	'\'': newSet(`'\`, "\r\n"),
	'`':  newSet("`\\", "\r\n"),
}

// notIn returns the complement of s (swallow sets for quoted values).
func notIn(s *byteSet) *byteSet {
	var c byteSet
	for i := range c {
		c[i] = !s[i]
	}
	return &c
}

func hasLetterDigit(b []byte) bool {
	var l, d bool
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			d = true
		case c|0x20 >= 'a' && c|0x20 <= 'z':
			l = true
		}
	}
	return l && d
}
