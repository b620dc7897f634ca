package redact_test

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// TestSplitToken checks R-054: "ghp_ABCD" then the rest in a second write
// emits neither fragment; the joined text holds one marker.
func TestSplitToken(t *testing.T) {
	var out bytes.Buffer
	w := redact.NewAnswer().Writer(&out)
	rest := "EFGHIJKLMNOPQRSTUVWXYZabcdefghij0123 done"
	mustWrite(t, w, "token ghp_ABCD")
	if strings.Contains(out.String(), "ghp_") || strings.Contains(out.String(), "ABCD") {
		t.Fatalf("after first chunk, emitted %q", out.String())
	}
	mustWrite(t, w, rest)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "token [REDACTED:github-token] done"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestHoldBackIsSmall checks that ordinary text is emitted promptly: only
// the last word may be held.
func TestHoldBackIsSmall(t *testing.T) {
	var out bytes.Buffer
	w := redact.NewAnswer().Writer(&out)
	mustWrite(t, w, "Hello, world. The answer is forty-two and the sk")
	if got, want := out.String(), "Hello, world. The answer is forty-two and the "; got != want {
		t.Errorf("emitted %q, want %q", got, want)
	}
	mustWrite(t, w, "y is blue")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "Hello, world. The answer is forty-two and the sky is blue"; got != want {
		t.Errorf("final %q, want %q", got, want)
	}
}

// TestCutTokenOnClose checks the fail-closed rule: a stream cut inside a
// token (max_tokens, cancel) still redacts what has a known anchor.
func TestCutTokenOnClose(t *testing.T) {
	for _, in := range []string{"see ghp_0123456789ab", "x sk-proj-ABCDEFGHJK", "k AKIAABCDEFGH", "Bearer abc123def456"} {
		var out bytes.Buffer
		w := redact.NewAnswer().Writer(&out)
		mustWrite(t, w, in)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "[REDACTED:") {
			t.Errorf("Close after %q wrote %q, want a marker", in, out.String())
		}
	}
}

// TestWholeRunes checks that the writer never emits half a UTF-8 character.
func TestWholeRunes(t *testing.T) {
	in := []byte("ünïcødé → ✓ 🎉 text")
	var chunks [][]byte
	rec := writerFunc(func(p []byte) (int, error) {
		if !utf8.Valid(p) {
			t.Errorf("emitted invalid UTF-8 chunk %q", p)
		}
		chunks = append(chunks, append([]byte(nil), p...))
		return len(p), nil
	})
	w := redact.NewAnswer().Writer(rec)
	for i := range in {
		if _, err := w.Write(in[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.Join(chunks, nil)); got != string(in) {
		t.Errorf("got %q, want %q", got, in)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func mustWrite(t *testing.T, w interface{ Write([]byte) (int, error) }, s string) {
	t.Helper()
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// filler is text that looks like answers and logs: code, prose, markdown,
// near-miss identifiers, escapes, ANSI colour and non-ASCII text.
var filler = []string{
	"the ", "const token = getToken();", "max_tokens=4096", "disk-usage ", "risk-assessment",
	"**bold** ", "`code` ", "(paren) ", "\n", "\r\n", "\t", "\\n", `\"`, "\x1b[31m", "\x1b[0m",
	"é", "日本語", "🎉", "sk-", "ghp_", "Bearer ", "bearer", "eyJ", "AKIA", "-----BEGIN ",
	"xoxb-", "ya29.", "npm_", "hf_", "glpat-", "password: ", "token=", "https://u:p@h/", "%20",
	"/home/u/x ", "123", ".", ",", "\"", "'", "=", ":", " ", " ", " ", "word", "Word9",
}

// doc builds a random document with the given canaries planted, each in a
// random wrapper, separated from neighbours by a space or newline.
func doc(rng *rand.Rand, cs []redacttest.Canary) string {
	var b strings.Builder
	for _, c := range cs {
		for range rng.IntN(12) {
			b.WriteString(filler[rng.IntN(len(filler))])
		}
		b.WriteString([]string{" ", "\n", "\t"}[rng.IntN(3)])
		b.WriteString(wrappers[rng.IntN(len(wrappers))].wrap(c.Text))
		b.WriteString([]string{" ", "\n", ". "}[rng.IntN(3)])
	}
	for range rng.IntN(8) {
		b.WriteString(filler[rng.IntN(len(filler))])
	}
	return b.String()
}

var (
	propIters = flag.Int("redact.iters", 300, "iterations of the streaming property test")
	propSeed  = flag.Uint64("redact.seed", 11, "seed of the streaming property test")
)

// TestStreamProperty checks, over random documents with planted secrets and
// random chunk boundaries, that streamed output equals one-shot output and
// holds no secret fragment of FragmentLen bytes (issue 4 property test).
func TestStreamProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(*propSeed, 13))
	all := redacttest.Canaries()
	diagAll := append(redacttest.DiagnosticCanaries(rand.New(rand.NewPCG(5, 5))), all...)
	profiles := []struct {
		r  *redact.Redactor
		cs []redacttest.Canary
	}{{redact.NewAnswer(), all}, {redact.NewDiagnostic("/home/u"), diagAll}}
	for iter := range *propIters {
		p := profiles[iter%2]
		planted := make([]redacttest.Canary, 1+rng.IntN(4))
		for i := range planted {
			planted[i] = p.cs[rng.IntN(len(p.cs))]
		}
		in := doc(rng, planted)
		want := p.r.String(in)
		if leaks := redacttest.Leaks([]byte(want), planted); len(leaks) > 0 {
			t.Fatalf("one-shot leaks %v\ninput: %q\noutput: %q", leaks, in, want)
		}
		for _, maxChunk := range []int{1, 3, 16, 64} {
			if got := streamed(t, p.r, in, rng, maxChunk); got != want {
				t.Fatalf("streamed (chunks ≤%d) differs\ninput: %q\nwant: %q\ngot:  %q", maxChunk, in, want, got)
			}
		}
	}
}

// TestBoundProperty checks that for every truncation limit the bounded
// output holds no fragment of a planted secret.
func TestBoundProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	r := redact.NewAnswer()
	all := redacttest.Canaries()
	for range 20 {
		c := all[rng.IntN(len(all))]
		in := doc(rng, []redacttest.Canary{c})
		for n := 0; n <= len(in)+1; n++ {
			out, _ := r.Bound(in, n)
			if len(out) > max(n, 0) || !utf8.ValidString(out) && utf8.ValidString(in) {
				t.Fatalf("Bound(%d) = %q: too long or invalid UTF-8", n, out)
			}
			if leaks := redacttest.Leaks([]byte(out), []redacttest.Canary{c}); len(leaks) > 0 {
				t.Fatalf("Bound(%d) leaks %v\ninput: %q", n, leaks, in)
			}
		}
	}
}
