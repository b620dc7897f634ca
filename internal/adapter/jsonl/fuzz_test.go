package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzNext checks the reader's properties on arbitrary lines: it stays in
// step (the next line is read intact), a reduction is valid JSON within
// the budget, a verbatim record is the line, and a strings-only cut keeps
// the structure with every string a prefix of the original.
func FuzzNext(f *testing.F) {
	for _, s := range []string{
		`{"type":"result","result":"` + strings.Repeat("ab\\n", 30) + `","n":1}`,
		`[1,2,3,{"a":[true,false,null]},"` + strings.Repeat("é", 20) + `"]`,
		`{"t":"\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00x"}`,
		`[[[[[[[[[[]]]]]]]]]]`, `{"a":` + strings.Repeat("1", 80) + `}`, `{"a":"x`, `"\u00e9\u0001\/"`,
	} {
		f.Add(s)
	}
	lim := Limits{Record: 24, String: 10, Budget: 96, Depth: 5}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			return
		}
		r := NewReader(strings.NewReader(line+"\n"+`{"next":true}`+"\n"), lim)
		rec, err := r.Next()
		var se *SyntaxError
		switch {
		case errors.As(err, &se):
			if json.Valid([]byte(line)) {
				t.Fatalf("valid line refused: %v", err)
			}
		case err != nil:
			t.Fatalf("Next: %v", err)
		default:
			check(t, line, rec, lim)
		}
		after, err := r.Next()
		if err != nil || string(after.Data) != `{"next":true}` {
			t.Fatalf("next record = %q, %v; out of step", after.Data, err)
		}
		if _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("end = %v, want EOF", err)
		}
	})
}

func check(t *testing.T, line string, rec Record, lim Limits) {
	t.Helper()
	if rec.Size != int64(len(line)) {
		t.Fatalf("Size = %d, want %d", rec.Size, len(line))
	}
	if len(line) <= lim.Record {
		if string(rec.Data) != line || rec.Cut != 0 {
			t.Fatalf("short line changed: %q -> %q (%v)", line, rec.Data, rec.Cut)
		}
		return
	}
	if !json.Valid(rec.Data) {
		t.Fatalf("reduction is not JSON: %q -> %q", line, rec.Data)
	}
	if max := lim.Budget + maxNumber + lim.Depth + 16; len(rec.Data) > max {
		t.Fatalf("reduction of %d bytes exceeds %d", len(rec.Data), max)
	}
	if rec.Cut&CutValues != 0 || !utf8.ValidString(line) {
		return
	}
	want, got := decode(t, []byte(line)), decode(t, rec.Data)
	prefix := cmp.FilterValues(func(a, b string) bool { return true }, cmp.Comparer(func(a, b string) bool {
		// one is the original, the other its reduction: a prefix either way
		if len(a) < len(b) {
			a, b = b, a
		}
		return strings.HasPrefix(a, b) && (len(a) == len(b) || len(b) > lim.String-utf8.UTFMax)
	}))
	if diff := cmp.Diff(want, got, prefix); diff != "" {
		t.Fatalf("strings-only cut changed more than strings (-line +reduction):\n%s", diff)
	}
	if rec.Cut == 0 && !cmp.Equal(want, got) {
		t.Fatalf("uncut reduction differs: %q -> %q", line, rec.Data)
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}
