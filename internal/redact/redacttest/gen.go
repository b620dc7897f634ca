package redacttest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/coagent8/coagent8/internal/redact"
)

type gen struct{ r *rand.Rand }

func (g gen) from(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	lowerABC = "abcdefghijklmnopqrstuvwxyz"
	upperABC = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digitSet = "0123456789"
)

// raw returns n random bytes of any value.
func (g gen) raw(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return b
}

func (g gen) alnum(n int) string   { return g.from(upperABC+lowerABC+digitSet, n) }
func (g gen) tok(n int) string     { return g.from(upperABC+lowerABC+digitSet+"_-", n) }
func (g gen) letters(n int) string { return g.from(upperABC+lowerABC, n) }
func (g gen) upper(n int) string   { return g.from(upperABC+digitSet, n) }
func (g gen) digits(n int) string  { return g.from(digitSet, n) }
func (g gen) hex(n int) string     { return g.from(digitSet+"abcdef", n) }
func (g gen) base32(n int) string  { return g.from(upperABC+"234567", n) }

func (g gen) jwt() Canary {
	enc := base64.RawURLEncoding.EncodeToString
	head := enc([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload := enc([]byte(fmt.Sprintf(`{"sub":"%s","iat":%s}`, g.alnum(24), g.digits(10))))
	sig := g.tok(43)
	return Canary{Name: "jwt", Kind: redact.KindJWT, Profile: redact.Answer,
		Text: head + "." + payload + "." + sig, Want: redact.KindJWT.Marker(),
		Needles: []string{payload[12:], sig}} // the payload's start encodes fixed JSON
}

func (g gen) pem(label string) Canary {
	var lines []string
	for range 12 {
		lines = append(lines, g.from(upperABC+lowerABC+digitSet+"+/", 64))
	}
	text := "-----BEGIN " + label + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + label + "-----"
	return Canary{Name: "pem-" + strings.ToLower(strings.Fields(label)[0]), Kind: redact.KindPrivateKey,
		Profile: redact.Answer, Text: text, Want: redact.KindPrivateKey.Marker(), Needles: lines}
}
