package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// Diagnostic-profile rules: keyword assignments with an
// explicit separator and a literal value, HTTP Basic credentials, URL
// userinfo, and the home directory. Never applied to answers.

const capValue = 1024

// exactKeys are keys whose literal values are secrets; suffixKeys also match
// as the last part of a compound key (GITHUB_TOKEN, db-password, x-api-key).
// Keys compare lower-cased with '-' read as '_'. Whole keys only: author,
// tokenizer, max_tokens and _authToken do not match (notes §2 pitfalls).
var (
	exactKeys = map[string]bool{
		"token": true, "access_token": true, "refresh_token": true, "id_token": true,
		"auth_token": true, "api_token": true, "bearer_token": true, "session_token": true,
		"oauth_token": true, "secret": true, "client_secret": true, "secret_key": true,
		"api_secret": true, "app_secret": true, "password": true, "passwd": true,
		"pwd": true, "passphrase": true, "auth": true, "api_key": true, "apikey": true,
		"access_key": true, "private_key": true, "secret_access_key": true,
		"credentials": true, "credential": true, "authorization": true,
	}
	suffixKeys = []string{"_token", "_password", "_passwd", "_pwd", "_secret", "_api_key",
		"_apikey", "_secret_key", "_access_key", "_private_key", "_passphrase"}
	// stopValues are words that name a type, a mode or a reference rather
	// than hold a secret: "password: string;", "auth=none", "Token: token".
	stopValues = map[string]bool{
		"string": true, "str": true, "number": true, "int": true, "integer": true,
		"bool": true, "boolean": true, "true": true, "false": true, "null": true,
		"nil": true, "none": true, "undefined": true, "any": true, "object": true,
		"bytes": true, "buffer": true, "required": true, "optional": true,
		"unknown": true, "void": true, "never": true, "secret": true, "token": true,
		"password": true, "auth": true, "key": true, "bearer": true, "basic": true,
		"digest": true, "negotiate": true, "oauth": true, "redacted": true,
		"empty": true, "unset": true, "missing": true, "invalid": true, "yes": true,
		"off": true, "env": true, "text": true, "hidden": true,
	}
	valueRun     = notIn(valueStop)
	setBackslash = newSet(`\\`)
	quotedRun    = map[byte]*byteSet{'"': notIn(quoteEnd['"']), '\'': notIn(quoteEnd['\'']), '`': notIn(quoteEnd['`'])}
)

// detectKeyword runs at '=' or ':' and replaces the literal value of a
// secret-named key. Calls, references, templates and type names are left
// alone: `const token = getToken();` is never rewritten.
func detectKeyword(c *cursor, i int) (match, res) {
	b := c.b
	if i+1 >= len(b) {
		return match{}, needOr(c, none)
	}
	sep, next := b[i], b[i+1]
	if sep == '=' && (next == '=' || next == '>') || sep == ':' && (next == ':' || next == '=' || next == '/') {
		return match{}, none
	}
	if sep == '=' && i > 0 && strings.IndexByte("=!<>+*/%&|^", b[i-1]) >= 0 {
		return match{}, none
	}
	compound, ok, partial := keyBefore(b, i, c.bnd)
	if !ok {
		return match{}, none
	}
	return keyValue(c, i+1, compound, partial)
}

// keyBefore reads the key that ends before the separator at i: optional
// spaces, an optional (escaped) closing quote, then the key run. It reads at
// most 76 bytes back, less than the streaming writer's context. partial
// reports a quoted key that is not whole (see [wholeKey]): only a quoted
// value makes it a key/value pair.
func keyBefore(b []byte, i, bnd int) (compound, ok, partial bool) {
	j := i
	if b[i] == '=' && j > 0 && b[j-1] == ':' { // Go's :=
		j--
	}
	for k := 0; k < 8 && j > 0 && setSpace[b[j-1]]; k++ {
		j--
	}
	var quote byte
	if j > 0 && (b[j-1] == '"' || b[j-1] == '\'') {
		j--
		quote = b[j]
		for k := 0; k < 8 && j > 0 && b[j-1] == '\\'; k++ { // \" and \\\" (JSON in JSON)
			j--
		}
	}
	e := j
	for j > 0 && e-j < 64 && setKey[b[j-1]] {
		j--
	}
	if e == j || e-j >= 64 {
		return false, false, false
	}
	partial = !wholeKey(b, j, e, quote)
	if j < bnd && bnd < e { // the run starts inside an escape
		j = bnd
	}
	var buf [64]byte
	k := buf[:0]
	for _, ch := range b[j:e] {
		if ch == '-' {
			ch = '_'
		}
		k = append(k, lower(ch))
	}
	k = bytes.TrimLeft(k, "_")
	if exactKeys[string(k)] {
		return false, true, partial
	}
	for _, s := range suffixKeys {
		if bytes.HasSuffix(k, []byte(s)) {
			return true, true, partial
		}
	}
	return false, false, false
}

// wholeKey reports whether the key run b[j:e] is a key rather than the tail
// of some other word. Before a closing quote the whole quoted text must be
// the key, optionally a dotted path ("spring.datasource.password"): in
// `context file "../../etc/passwd": give …` the quote ends a value, and the
// keyword rule must not reach across it into the message (issue 19 item 12).
// Unquoted keys keep matching as the tail of any run ("…/client_secret: v"):
// without a quote there is no value end to respect. A quoted key that is not
// whole still matches when its value is quoted too: `"db password": "v"`,
// `"/run/secrets/db_password": "v"` and `"settings:password": "v"` are JSON
// key/value pairs, and the item 12 fix must not let their credentials through.
func wholeKey(b []byte, j, e int, quote byte) bool {
	if quote == 0 {
		return true
	}
	for s := j; s > 0 && e-s < 64; s-- {
		switch c := b[s-1]; {
		case c == quote:
			return true
		case c != '.' && !setKey[c]:
			return false
		}
	}
	return false
}

// keyValue reads the value after a separator: quoted (up to the closing
// quote, a backslash or a line end) or bare (up to a delimiter). With
// onlyQuoted a bare value is no match (see [wholeKey]).
func keyValue(c *cursor, j int, compound, onlyQuoted bool) (match, res) {
	b := c.b
	k, _, eof := span(b, j, setSpace, 8)
	if eof {
		return match{}, needOr(c, none)
	}
	run, quoted := valueRun, false
	if b[k] == '\\' { // \"value\" inside a JSON string, escaped once or more
		e, _, eof := span(b, k, setBackslash, 8)
		if eof {
			return match{}, needOr(c, none)
		}
		if b[e] == '"' {
			k = e
		}
	}
	if q, isQ := quotedRun[b[k]]; isQ {
		run, quoted = q, true
		k++
	}
	if onlyQuoted && !quoted {
		return match{}, none
	}
	end, capped, eof := span(b, k, run, capValue)
	if capped {
		return match{start: k, end: end, kind: KindSecret, swallow: run}, hit
	}
	if eof && !c.final {
		return match{}, more
	}
	if end > k+1 {
		if p := bytes.Index(b[k+1:end], []byte("-----BEGIN")); p >= 0 {
			end = k + 1 + p // a PEM block inside a quoted value is its own match
		}
	}
	for !quoted && end > k && b[end-1] == ':' { // "k=other_key: v": the next key is not this value
		end--
	}
	if !quoted && end < len(b) && b[end] == '(' { // a call: getToken()
		return match{}, none
	}
	if !literal(b[k:end], quoted, compound) {
		return match{}, none
	}
	return refine(c, match{start: k, end: end, kind: KindSecret})
}

// literal reports whether v is a value to hide rather than a reference,
// a template, a type name or code.
func literal(v []byte, quoted, compound bool) bool {
	if len(v) < 3 || strings.IndexByte("$%{<[(*#", v[0]) >= 0 {
		return false
	}
	if compound && allDigits(v) { // max_token=4096
		return false
	}
	if quoted {
		return true
	}
	v = bytes.TrimRight(v, ".:")
	return !stopValues[strings.ToLower(string(v))] && !dottedIdent(v)
}

func allDigits(v []byte) bool {
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// dottedIdent reports a property path such as process.env.DB_PASSWORD or
// cfg.Token: a reference, not a literal.
func dottedIdent(v []byte) bool {
	parts := bytes.Split(v, []byte("."))
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if len(p) == 0 || p[0] >= '0' && p[0] <= '9' {
			return false
		}
		for _, c := range p {
			if !setWordU[c] {
				return false
			}
		}
	}
	return true
}

// detectBasic finds "Basic <base64(user:pass)>" (RFC 7617).
func detectBasic(c *cursor, i int) (match, res) {
	if r := litFold(c, i, "basic"); r != hit {
		return match{}, r
	}
	return schemeToken(c, i+len("basic"), KindBasic, setB64Std, 8, basicPair)
}

func basicPair(t []byte) bool {
	var dst [96]byte
	t = bytes.TrimRight(t, "=")
	if len(t) > 128 {
		t = t[:128]
	}
	if len(t)%4 == 1 {
		return false
	}
	n, err := base64.RawStdEncoding.Decode(dst[:], t)
	return err == nil && bytes.IndexByte(dst[:n], ':') > 0
}

// setAuthority is the authority of a URL (RFC 3986 §3.2) without '/'.
var setAuthority = newSet("A-Z", "a-z", "0-9", "-._~%!$&'()*+,;=:@[]")

// detectURLCreds runs at ':' and replaces user:password in
// scheme://user:password@host. The last '@' before the path ends the
// userinfo, so an unescaped '@' in a password does not leak its tail.
func detectURLCreds(c *cursor, i int) (match, res) {
	if r := lit(c, i, "://"); r != hit {
		return match{}, r
	}
	b := c.b
	s := i + 3
	end, capped, eof := span(b, s, setAuthority, 256)
	if capped {
		return match{}, none
	}
	if eof && !c.final {
		return match{}, more
	}
	at := bytes.LastIndexByte(b[s:end], '@')
	if at < 0 {
		return match{}, none
	}
	colon := bytes.IndexByte(b[s:s+at], ':')
	if colon < 0 || colon == at-1 {
		return match{}, none
	}
	return match{start: s, end: s + at, kind: KindURLCredentials}, hit
}
