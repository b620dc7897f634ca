package redact_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// prefilterContext is what may sit right before a credential and change
// its verdict: escapes that make a left boundary (CSI, JSON and percent
// escapes, within and beyond their reach), word bytes that take it away,
// and near-miss anchors.
var prefilterContext = []string{
	"", " ", "x", "\x1b[1;32m", "\x1b[" + strings.Repeat("1;", 15) + "m", "\x1b[" + strings.Repeat("1", 40) + "m",
	`\n`, `\u0041`, `\\`, "%2F", "%", "\x1b", `"text":"`, "sk", "Bea", "bearer", "-----", "A", "ey", "c8g", "c8",
	strings.Repeat("a", 33) + `\u0020`, `\u0020` + strings.Repeat("a", 33),
}

// checkPrefilter fails when the prefiltered one-shot result differs from
// the full scan's, or Changes disagrees with it.
func checkPrefilter(t *testing.T, r *redact.Redactor, in []byte) {
	t.Helper()
	want := redact.FullScan(r, in)
	if got := r.Bytes(in); !bytes.Equal(got, want) {
		t.Fatalf("prefiltered != full scan\nin:   %q\nwant: %q\ngot:  %q", in, want, got)
	}
	if got, want := r.Changes(in), !bytes.Equal(want, in); got != want {
		t.Fatalf("Changes(%q) = %v, want %v", in, got, want)
	}
}

// everyAnchor returns one credential per detector anchor, including the
// formats the canary set has no example of (A3T, ABIA, ACCA, e30, folded
// Bearer, each token prefix).
func everyAnchor() []string {
	const body = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj2kLm5n" // every prefix's minimum (c8g_: 43)
	var out []string
	for _, p := range redact.TokenPrefixes() {
		out = append(out, p+body)
	}
	return append(out, "AKIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP", "ABIAABCDEFGHIJKLMNOP",
		"ACCAABCDEFGHIJKLMNOP", "A3TXABCDEFGHIJKLMNOP", "e30.c3ViamVjdDEyMw.c2lnbmF0dXJl",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
		"BEARER "+body, "bEaReR\t"+body, "bearer\t"+body,
		"-----BEGIN PRIVATE KEY-----\n"+body+"\n-----END PRIVATE KEY-----")
}

// TestPrefilterSameFindings: every canary of every format, after every
// context, inside filler text and cut at every length, redacts exactly as
// the full scan does (issue 18 performance: the prefilter must keep the
// same findings).
func TestPrefilterSameFindings(t *testing.T) {
	for _, r := range []*redact.Redactor{redact.NewAnswer(), redact.NewDiagnostic("/home/u")} {
		var texts []string
		for _, c := range redacttest.All() {
			texts = append(texts, c.Text)
		}
		for _, text := range append(texts, everyAnchor()...) {
			for _, pre := range prefilterContext {
				for _, f := range []string{"", filler[0], filler[len(filler)-1]} {
					checkPrefilter(t, r, []byte(f+pre+text+". "+f))
				}
			}
			for n := range len(text) + 1 {
				checkPrefilter(t, r, []byte("x "+text[:n]))
			}
		}
		for _, f := range filler {
			checkPrefilter(t, r, []byte(f))
		}
	}
}

// TestPrefilterRandom compares the two on random text over an alphabet
// dense in anchor, escape and boundary bytes, where near misses are common.
func TestPrefilterRandom(t *testing.T) {
	const alphabet = "skrghlpatbBeEyJ30AKISCT_-.%\\u\x1b[m; \n\"=:/ya29xoxnpmfhic8"
	r := redact.NewAnswer()
	rng := rand.New(rand.NewPCG(18, 6))
	cs := redacttest.All()
	buf := make([]byte, 0, 512)
	for range 20000 {
		buf = buf[:0]
		for range rng.IntN(300) {
			if rng.IntN(40) == 0 {
				buf = append(buf, cs[rng.IntN(len(cs))].Text...)
				continue
			}
			buf = append(buf, alphabet[rng.IntN(len(alphabet))])
		}
		checkPrefilter(t, r, buf)
	}
}

// FuzzPrefilter: for any input, the prefiltered one-shot scan equals the
// full scan.
func FuzzPrefilter(f *testing.F) {
	for _, c := range redacttest.All() {
		f.Add([]byte("\x1b[0m" + c.Text))
		f.Add([]byte(`\u0022` + c.Text[:len(c.Text)/2]))
	}
	for _, s := range everyAnchor() {
		f.Add([]byte(s))
	}
	for _, s := range filler {
		f.Add([]byte(s))
	}
	ans, diag := redact.NewAnswer(), redact.NewDiagnostic("/home/u")
	f.Fuzz(func(t *testing.T, in []byte) {
		checkPrefilter(t, ans, in)
		checkPrefilter(t, diag, in)
	})
}
