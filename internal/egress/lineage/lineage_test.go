package lineage

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const secretNotes = `Project Nightingale acquisition notes
Target valuation: 41.7M, board vote on the 14th.
Contact: the CFO's private line, do not share outside the deal team.
`

// catN renders text the way Claude Code's Read tool shows a file.
func catN(s, sep string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		fmt.Fprintf(&b, "%6d%s%s\n", i+1, sep, l)
	}
	return b.String()
}

func body(t *testing.T, texts ...string) []byte {
	t.Helper()
	var content []map[string]any
	for _, s := range texts {
		content = append(content, map[string]any{"type": "text", "text": s})
	}
	b, err := json.Marshal(map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": content}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScan(t *testing.T) {
	x := NewIndex()
	x.Add(0, []byte(secretNotes))
	x.Add(1, []byte("hunter2-pass")) // tiny
	tests := []struct {
		name string
		body []byte
		want []int32
	}{
		{"verbatim", body(t, "here it is: "+secretNotes), []int32{0}},
		{"cat -n tab", body(t, catN(secretNotes, "\t")), []int32{0}},
		{"cat -n arrow", body(t, catN(secretNotes, "→")), []int32{0}},
		{"reindented", body(t, strings.ReplaceAll(secretNotes, " ", "\n   ")), []int32{0}},
		{"one line", body(t, "the valuation: Target valuation: 41.7M, board vote on the 14th."), []int32{0}},
		{"html-escaped json", []byte(`{"a":"Contact: the CFO\u0027s private line, do not share outside the deal team."}`), []int32{0}},
		{"tiny", body(t, "pw is hunter2-pass ok"), []int32{1}},
		{"unrelated", body(t, "Reply with the word from the double. "+strings.Repeat("lorem ipsum ", 50)), nil},
		{"split across strings", body(t, secretNotes[:15], secretNotes[15:30]), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := x.Scan(tt.body, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, r.Sources); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScanMalformedIsUnknown(t *testing.T) {
	for _, b := range []string{`{"a":"unterminated`, `{"a":"bad \x escape"}`, "{\"a\":\"ctl\x01\"}", `{"a":"\u12"}`} {
		if _, err := NewIndex().Scan([]byte(b), true, false); err == nil || !strings.Contains(err.Error(), ErrUnknown.Error()) {
			t.Errorf("%q: err %v", b, err)
		}
	}
}

// TestSpansCoverAndKeepJSON checks that replacing the reported spans
// removes every fingerprint of the file and leaves valid JSON.
func TestSpansCoverAndKeepJSON(t *testing.T) {
	x := NewIndex()
	x.Add(0, []byte(secretNotes))
	x.Add(1, []byte("hunter2-pass"))
	b := body(t, "unlabelled text before the file. "+catN(secretNotes, "\t")+" and unlabelled text after it, then hunter2-pass.", "other string")
	r, err := x.Scan(b, true, true)
	if err != nil || len(r.Spans) == 0 {
		t.Fatalf("spans %v err %v", r.Spans, err)
	}
	var out []byte
	last := 0
	for _, s := range r.Spans {
		out = append(append(out, b[last:s.Start]...), "[PRIVATE]"...)
		last = s.End
	}
	out = append(out, b[last:]...)
	if !json.Valid(out) {
		t.Fatalf("not JSON: %s", out)
	}
	again, err := x.Scan(out, true, false)
	if err != nil || len(again.Sources) != 0 {
		t.Errorf("residue %v err %v in %s", again.Sources, err, out)
	}
	if !strings.Contains(string(out), "unlabelled text before") || !strings.Contains(string(out), "text after it") || !strings.Contains(string(out), "other string") {
		t.Errorf("unlabelled text lost: %s", out)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"private/**", "private/a/b.txt", true},
		{"private/**", "public/a.txt", false},
		{"**/*.env", ".env", true}, // path.Match has no dot-file rule
		{"**/.env", ".env", true},
		{"**/.env", "a/b/.env", true},
		{"notes/*.md", "notes/x.md", true},
		{"notes/*.md", "notes/a/x.md", false},
		{"[", "[", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pat, tt.name); got != tt.want {
			t.Errorf("Match(%q,%q)=%v", tt.pat, tt.name, got)
		}
	}
	for _, g := range []string{"", "/abs", "a/../b", "a//b", `a\b`, "["} {
		if ValidGlob(g) {
			t.Errorf("ValidGlob(%q)", g)
		}
	}
}

func TestWorkspaceFreshness(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "private"), 0o755)
	os.WriteFile(filepath.Join(root, "private", "a.md"), []byte(secretNotes), 0o644)
	w, err := NewWorkspace(root, [][]string{{"private/**"}})
	if err != nil {
		t.Fatal(err)
	}
	found := func() bool {
		t.Helper()
		x, err := w.Current()
		if err != nil {
			t.Fatal(err)
		}
		r, _ := x.Scan(body(t, "new: a brand new private file written after the index was built"), true, false)
		return len(r.Sources) > 0
	}
	if found() {
		t.Fatal("matched before the file existed")
	}
	os.WriteFile(filepath.Join(root, "private", "b.md"), []byte("a brand new private file written after the index was built"), 0o644)
	if !found() {
		t.Error("new labelled file not indexed")
	}
	os.Chmod(filepath.Join(root, "private", "b.md"), 0o000)
	os.WriteFile(filepath.Join(root, "private", "b.md"), nil, 0o000) // touch: size changes
	if os.Geteuid() != 0 {
		if _, err := w.Current(); err == nil {
			t.Error("unreadable labelled file did not make lineage unknown")
		}
	}
}

func FuzzScan(f *testing.F) {
	x := NewIndex()
	x.Add(0, []byte(secretNotes))
	f.Add([]byte(`{"a":"` + secretNotes + `"}`))
	f.Add([]byte(`{"a":"\ud83d\ude00 \u2192"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := x.Scan(b, true, true)
		if err != nil {
			return
		}
		for _, s := range r.Spans {
			if s.Start < 0 || s.End > len(b) || s.Start >= s.End {
				t.Fatalf("bad span %+v for %d bytes", s, len(b))
			}
		}
	})
}
