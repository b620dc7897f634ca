package redact

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
)

// Caps bound how far a detector reads, and so the streaming hold-back.
const (
	capToken  = 2048     // prefixed tokens (ghs_ ~520, OpenAI ~200 observed)
	capBearer = 8 << 10  // Bearer values may be long JWTs
	capJWT    = 16 << 10 // bare JWTs
	capPEM    = 16 << 10 // an 8192-bit RSA key is ~6.5 KiB of PEM
)

// MaxHold is an upper bound, in bytes, of what the streaming writer holds
// back before emitting: the largest detector cap plus its framing.
const MaxHold = capPEM + 256

// tokenRule is a credential format with a literal anchor (notes §2): a
// prefix, then a run of body characters of at least min bytes, extended over
// the whole run so long new-format tokens leave no tail (notes §2 pitfalls).
type tokenRule struct {
	prefix  string
	kind    Kind
	body    *byteSet
	min     int
	trimDot bool              // a token never ends in '.': leave prose punctuation
	keep    bool              // the prefix stays in clear (webhook host and path)
	check   func([]byte) bool // optional validator on the body
}

// tokenRules are the answer-profile formats with literal anchors (R-048,
// AUD-P2-13). Order matters within one first byte: longer prefixes first.
var tokenRules = []*tokenRule{
	{prefix: "sk-ant-", kind: KindAnthropic, body: setTokDot, min: 24, trimDot: true},
	{prefix: "sk-proj-", kind: KindOpenAI, body: setTok, min: 20},
	{prefix: "sk-svcacct-", kind: KindOpenAI, body: setTok, min: 20},
	{prefix: "sk-admin-", kind: KindOpenAI, body: setTok, min: 20},
	{prefix: "sk-None-", kind: KindOpenAI, body: setTok, min: 20},
	// Legacy OpenAI (48 chars) and other sk- vendors (32 hex and up).
	{prefix: "sk-", kind: KindOpenAI, body: setTok, min: 32, check: hasLetterDigit},
	{prefix: "sk_live_", kind: KindStripe, body: setAlnum, min: 10},
	{prefix: "sk_test_", kind: KindStripe, body: setAlnum, min: 10},
	{prefix: "rk_live_", kind: KindStripe, body: setAlnum, min: 10},
	{prefix: "rk_test_", kind: KindStripe, body: setAlnum, min: 10},
	{prefix: "ghp_", kind: KindGitHub, body: setWordU, min: 36},
	{prefix: "gho_", kind: KindGitHub, body: setWordU, min: 36},
	{prefix: "ghu_", kind: KindGitHub, body: setWordU, min: 36},
	// Installation and refresh tokens: ghs_<AppID>_<JWT> with '.' and '-'.
	{prefix: "ghs_", kind: KindGitHub, body: setTokDot, min: 36, trimDot: true},
	{prefix: "ghr_", kind: KindGitHub, body: setTokDot, min: 36, trimDot: true},
	{prefix: "github_pat_", kind: KindGitHub, body: setWordU, min: 22},
	{prefix: "glpat-", kind: KindGitLab, body: setTokDot, min: 20, trimDot: true},
	{prefix: "gldt-", kind: KindGitLab, body: setTokDot, min: 20, trimDot: true},
	{prefix: "glrt-", kind: KindGitLab, body: setTokDot, min: 20, trimDot: true},
	{prefix: "glptt-", kind: KindGitLab, body: setTokDot, min: 20, trimDot: true},
	{prefix: "glsoat-", kind: KindGitLab, body: setTokDot, min: 20, trimDot: true},
	{prefix: "glcbt-", kind: KindGitLab, body: setTokDot, min: 20, trimDot: true},
	{prefix: "ya29.", kind: KindGoogle, body: setTokDot, min: 20, trimDot: true},
	{prefix: "npm_", kind: KindNPM, body: setAlnum, min: 36},
	{prefix: "hf_", kind: KindHuggingFace, body: setAlnum, min: 34},
	{prefix: "api_org_", kind: KindHuggingFace, body: setAlnum, min: 34},
	{prefix: "xoxe.xoxp-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xoxa-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xoxb-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xoxe-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xoxo-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xoxp-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xoxr-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xoxs-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	{prefix: "xapp-", kind: KindSlack, body: setSlack, min: 10, check: hasLetterDigit},
	// The provider gate's phantom credential (internal/gate newPhantom): 256
	// random bits in unpadded base64url, exactly 43 characters. gate tests
	// that every phantom it mints is caught here (redact must not import it).
	{prefix: "c8g_", kind: KindPhantom, body: setTok, min: 43},
	// The webhook secret is its path; the host stays readable.
	{prefix: "hooks.slack.com/services/", kind: KindSlackWebhook, body: setHook, min: 20, keep: true},
}

func (t *tokenRule) detect(c *cursor, i int) (match, res) {
	if r := lit(c, i, t.prefix); r != hit {
		return match{}, r
	}
	j := i + len(t.prefix)
	start := i
	if t.keep {
		start = j
	}
	end, capped, eof := span(c.b, j, t.body, capToken)
	if capped {
		return match{start: start, end: end, kind: t.kindAt(c.b[i:]), swallow: t.body}, hit
	}
	if eof && !c.final {
		return match{}, more
	}
	if t.trimDot {
		end = trimDots(c.b, j, end)
	}
	body := c.b[j:end]
	ok := len(body) >= t.min && (t.check == nil || t.check(body))
	if !ok && !(eof && len(body) >= partialMin) {
		return match{}, none
	}
	return match{start: start, end: end, kind: t.kindAt(c.b[i:])}, hit
}

// kindAt is the kind of t's match at the start of b: that of the longest
// token prefix b starts with. A rule can hit where a longer prefix's rule
// declined: "sk-ant-api03" at the end of input is too short after
// "sk-ant-" for that rule's fail-closed minimum ([partialMin]), not after
// "sk-", and was marked openai-key. The marker names the format the prefix
// says. b holds the longer prefix whenever t hits: t's body spans it.
func (t *tokenRule) kindAt(b []byte) Kind {
	for _, r := range refinements[t] {
		if bytes.HasPrefix(b, []byte(r.prefix)) {
			return r.kind
		}
	}
	return t.kind
}

// refinements maps each token rule to the rules whose prefix extends its
// own with another kind ("sk-" to "sk-ant-"), longest prefix first. The
// extension must be bytes of the shorter rule's body, so its span covers
// it: a streamed match then sees the same prefix as a one-shot one.
var refinements = refinementsOf(tokenRules)

func refinementsOf(rules []*tokenRule) map[*tokenRule][]*tokenRule {
	out := map[*tokenRule][]*tokenRule{}
	for _, t := range rules {
		for _, r := range rules {
			if r.kind != t.kind && len(r.prefix) > len(t.prefix) && strings.HasPrefix(r.prefix, t.prefix) &&
				allIn(t.body, r.prefix[len(t.prefix):]) {
				out[t] = append(out[t], r)
			}
		}
		slices.SortStableFunc(out[t], func(a, b *tokenRule) int { return len(b.prefix) - len(a.prefix) })
	}
	return out
}

func allIn(set *byteSet, s string) bool {
	for i := 0; i < len(s); i++ {
		if !set[s[i]] {
			return false
		}
	}
	return true
}

// detectJWT finds header.payload.signature in base64url whose header
// decodes to a JSON object (notes §2: ey[J]… or e30…).
func detectJWT(c *cursor, i int) (match, res) {
	r := lit(c, i, "eyJ")
	if r == none {
		r = lit(c, i, "e30")
	}
	if r != hit {
		return match{}, r
	}
	b := c.b
	var dots [2]int
	j := i
	for seg := 0; seg < 3; seg++ {
		end, capped, eof := span(b, j, setTok, capJWT-(j-i))
		switch {
		case capped:
			return match{start: i, end: end, kind: KindJWT, swallow: setTokDot}, hit
		case eof && !c.final:
			return match{}, more
		case eof:
			if end-i >= 3+partialMin { // cut by the end of input: fail closed
				return match{start: i, end: end, kind: KindJWT}, hit
			}
			return match{}, none
		}
		if seg == 2 {
			j = end
			break
		}
		if b[end] != '.' {
			return match{}, none
		}
		dots[seg] = end
		j = end + 1
	}
	head, payload := b[i:dots[0]], b[dots[0]+1:dots[1]]
	if (len(head) < 10 && string(head) != "e30") || len(payload) < 8 || !jsonObject(head) {
		return match{}, none
	}
	if j == dots[1]+1 { // unsigned token: leave a sentence's final dot
		j = dots[1]
	}
	return match{start: i, end: j, kind: KindJWT}, hit
}

// jsonObject reports whether base64url text starts with an encoded '{'.
func jsonObject(seg []byte) bool {
	var dst [6]byte
	n := min(len(seg), 8)
	if n%4 == 1 { // a lone trailing sextet is not base64
		n--
	}
	k, err := base64.RawURLEncoding.Decode(dst[:], seg[:n])
	if err != nil && k == 0 {
		return false
	}
	return k > 0 && dst[0] == '{'
}

// detectAWS finds AWS access key IDs: a known 4-letter prefix and 16 base32
// characters, not glued to a letter or digit on either side.
func detectAWS(c *cursor, i int) (match, res) {
	r := none
	for _, p := range [...]string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"} {
		if r = lit(c, i, p); r != none {
			break
		}
	}
	if r != hit {
		return match{}, r
	}
	b := c.b
	if b[i+1] == '3' {
		if i+3 >= len(b) {
			return match{}, needOr(c, none)
		}
		if !setUpperNum[b[i+3]] {
			return match{}, none
		}
	}
	j := i + 4
	end, _, eof := span(b, j, setAWS, 16)
	if end-j < 16 {
		if !eof {
			return match{}, none
		}
		if !c.final {
			return match{}, more
		}
		if end-i < 4+partialMin {
			return match{}, none
		}
	} else if end == len(b) {
		if !c.final {
			return match{}, more
		}
	} else if setWord[b[end]] {
		return match{}, none
	}
	return match{start: i, end: end, kind: KindAWS}, hit
}

// detectPEM finds a private-key block, raw or with \n-escaped lines (JSON).
// Without an END line within capPEM it ends with the base64 body, so a cut
// block still loses its key material (fail closed).
func detectPEM(c *cursor, i int) (match, res) {
	if r := lit(c, i, "-----BEGIN "); r != hit {
		return match{}, r
	}
	b := c.b
	j := i + len("-----BEGIN ")
	end, _, eof := span(b, j, setPEMLabel, 64)
	if eof {
		return match{}, needOr(c, none)
	}
	label := bytes.TrimRight(b[j:end], " ")
	if !bytes.HasSuffix(label, []byte("PRIVATE KEY")) && !bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK")) {
		return match{}, none
	}
	if r := lit(c, end, "-----"); r != hit {
		return match{}, r
	}
	body := end + 5
	lim := min(len(b), i+capPEM)
	if k := bytes.Index(b[body:lim], []byte("-----END ")); k >= 0 {
		return pemEnd(c, i, body+k+len("-----END "))
	}
	if lim < i+capPEM && !c.final {
		return match{}, more // the END line may still come
	}
	e, capped, _ := span(b, body, setPEMBody, lim-body)
	if capped {
		return match{start: i, end: e, kind: KindPrivateKey, swallow: setPEMBody}, hit
	}
	for e > body && (b[e-1] == '\n' || b[e-1] == '\r') {
		e--
	}
	return match{start: i, end: e, kind: KindPrivateKey}, hit
}

// pemEnd closes a block whose "-----END " ends at j.
func pemEnd(c *cursor, i, j int) (match, res) {
	e, _, eof := span(c.b, j, setPEMLabel, 64)
	if eof && !c.final {
		return match{}, more
	}
	switch lit(c, e, "-----") {
	case more:
		return match{}, more
	case hit:
		e += 5
	}
	return match{start: i, end: e, kind: KindPrivateKey}, hit
}

// detectBearer finds "Bearer <b64token>" (RFC 6750 §2.1), case-insensitive,
// replacing only the token. A minimum length and a letter-and-digit mix keep
// "Bearer authentication" intact (notes §2 pitfalls).
func detectBearer(c *cursor, i int) (match, res) {
	if r := litFold(c, i, "bearer"); r != hit {
		return match{}, r
	}
	return schemeToken(c, i+len("bearer"), KindBearer, setB64Token, 16, nil)
}

// schemeToken reads whitespace and a credential after an auth scheme word.
func schemeToken(c *cursor, j int, kind Kind, set *byteSet, minLen int, check func([]byte) bool) (match, res) {
	b := c.b
	tok, _, eof := span(b, j, setSpace, 16)
	if eof {
		return match{}, needOr(c, none)
	}
	if tok == j || !set[b[tok]] {
		return match{}, none
	}
	end, capped, eof := span(b, tok, set, capBearer)
	if capped {
		return match{start: tok, end: end, kind: kind, swallow: set}, hit
	}
	if eof && !c.final {
		return match{}, more
	}
	end = trimDots(b, tok, end)
	t := b[tok:end]
	if placeholder(t) {
		return match{}, none
	}
	ok := len(t) >= minLen && (check == nil || check(t)) && (check != nil || hasLetterDigit(t))
	if !ok && !(eof && len(t) >= partialMin && hasLetterDigit(t)) {
		return match{}, none
	}
	return refine(c, match{start: tok, end: end, kind: kind})
}

// refine names the precise format of a value found by a generic rule.
func refine(c *cursor, m match) (match, res) {
	im, r := c.inner(m.start)
	if r == none && c.b[m.start] == '-' { // a PEM block behind API_KEY=
		im, r = detectPEM(c, m.start)
	}
	switch {
	case r == more:
		return match{}, more
	case r == hit && im.start == m.start:
		m.kind = im.kind
		if im.end > m.end {
			m.end, m.swallow = im.end, im.swallow
		}
	}
	return m, hit
}

// placeholder reports documentation stand-ins such as YOUR_TOKEN or xxxx.
func placeholder(t []byte) bool {
	for _, p := range [...]string{"your", "xxx", "redacted", "placeholder", "changeme", "change_me"} {
		if len(t) >= len(p) && bytes.EqualFold(t[:len(p)], []byte(p)) {
			return true
		}
	}
	return false
}
