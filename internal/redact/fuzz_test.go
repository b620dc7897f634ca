package redact_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// chunked writes data through w in chunks drawn from seed.
func chunked(t *testing.T, r *redact.Redactor, data []byte, seed uint64) []byte {
	t.Helper()
	var out bytes.Buffer
	w := r.Writer(&out)
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	for len(data) > 0 {
		n := min(len(data), 1+rng.IntN(1+int(seed%67)))
		if _, err := w.Write(data[:n]); err != nil {
			t.Fatal(err)
		}
		data = data[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// FuzzStream: for any input and chunking, streamed output equals one-shot
// output, and valid UTF-8 stays valid.
func FuzzStream(f *testing.F) {
	for _, c := range redacttest.All() {
		f.Add([]byte("x "+c.Text+". y"), uint64(len(c.Text)), false)
		f.Add([]byte(c.Text[:len(c.Text)/2]), uint64(3), true)
	}
	for _, s := range filler {
		f.Add([]byte(s+s), uint64(1), true)
	}
	f.Add([]byte("\x1b[1;32mpassword=abc123\x1b[0m /home/u/x"), uint64(5), true)
	f.Add([]byte("Bearer \t"), uint64(2), false)
	f.Add([]byte("c8g_"+strings.Repeat("A-_9", 11)), uint64(6), true)                // the gate's phantom, one byte past its 43
	f.Add([]byte(`context file "../../etc/passwd": give the path`), uint64(4), true) // issue 19 item 12
	diag, ans := redact.NewDiagnostic("/home/u"), redact.NewAnswer()
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, useDiag bool) {
		r := ans
		if useDiag {
			r = diag
		}
		want := r.Bytes(data)
		got := chunked(t, r, data, seed)
		if !bytes.Equal(got, want) {
			t.Fatalf("streamed != one-shot\nin:   %q\nwant: %q\ngot:  %q", data, want, got)
		}
		if utf8.Valid(data) && !utf8.Valid(got) {
			t.Fatalf("valid input, invalid output %q", got)
		}
	})
}

// FuzzPlanted: a canary planted between arbitrary text (on its own line)
// never leaves a fragment, one-shot or streamed.
func FuzzPlanted(f *testing.F) {
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----"), []byte("tail"), uint8(0), uint64(1))
	f.Add([]byte(`password="`), []byte(`"`), uint8(5), uint64(9))
	f.Add([]byte("Bearer"), []byte("..."), uint8(30), uint64(64))
	f.Add([]byte("\x1b["), []byte("\x1b[0m"), uint8(12), uint64(2))
	f.Add([]byte(`context file "../../etc/passwd": `), []byte(`"`), uint8(3), uint64(7)) // issue 19 item 12
	cs := redacttest.All()
	diag := redact.NewDiagnostic("/home/u")
	f.Fuzz(func(t *testing.T, pre, post []byte, idx uint8, seed uint64) {
		c := cs[int(idx)%len(cs)]
		in := append(append(append(append([]byte{}, pre...), '\n'), c.Text...), '\n')
		in = append(in, post...)
		for _, out := range [][]byte{diag.Bytes(in), chunked(t, diag, in, seed)} {
			if leaks := redacttest.Leaks(out, []redacttest.Canary{c}); len(leaks) > 0 {
				t.Fatalf("leak %v\nin:  %q\nout: %q", leaks, in, out)
			}
		}
	})
}
