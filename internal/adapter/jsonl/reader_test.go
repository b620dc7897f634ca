package jsonl

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// small limits make every reduction path reachable with short inputs.
var small = Limits{Record: 16, String: 8, Budget: 64, Depth: 4}

func next(t *testing.T, in string, lim Limits) (Record, error) {
	t.Helper()
	return NewReader(strings.NewReader(in), lim).Next()
}

func TestNextReduces(t *testing.T) {
	long := strings.Repeat("a", 40)
	tests := []struct {
		name, in, want string
		cut            Cut
	}{
		{"short verbatim", `{"a": 1}`, `{"a": 1}`, 0},
		{"long, nothing to cut", `{"a": 1, "b": 2, "c": [true, false, null]}`, `{"a":1,"b":2,"c":[true,false,null]}`, 0},
		{"long string clipped", `{"type":"x","t":"` + long + `","n":2}`, `{"type":"x","t":"aaaaaaaa","n":2}`, CutStrings},
		{"escape kept whole", `{"t":"abcdefg\n` + long + `"}`, `{"t":"abcdefg\n"}`, CutStrings},
		{"escape not split", `{"t":"abcdefgh\n` + long + `"}`, `{"t":"abcdefgh"}`, CutStrings},
		{"utf8 not split", `{"t":"abcdefgé` + long + `"}`, `{"t":"abcdefg"}`, CutStrings},
		{"surrogate pair not split", `{"t":"abcdef\ud83d\ude00` + long + `"}`, `{"t":"abcdef"}`, CutStrings},
		{"surrogate pair kept", `{"t":"abcd\ud83d\ude00` + long + `"}`, `{"t":"abcd\ud83d\ude00"}`, CutStrings},
		{"key clipped by the budget", `{"` + long + `":1,"zzzzzzzzzzzzzzzzzz":2}`, `{"` + long + `":1,"zzzzzzzzzzzzzzzzz":2}`, CutValues},
		{"too deep", `[[[[[1]]]],"pad-pad-pad"]`, `[[[[]]],"pad-pad-"]`, CutValues | CutStrings},
		{"long number", `{"n":` + strings.Repeat("9", 70) + `}`, `{"n":0}`, CutValues},
		{"budget drops members", `[` + strings.Repeat(`"aaaaaaaaaaaa",`, 10) + `1]`,
			`["aaaaaaaa","aaaaaaaa","aaaaaaaa","aaaaaaaa","aaaaaaaa","aaaaaaa"]`, CutStrings | CutValues},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := next(t, tt.in+"\n", small)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got.Data)); diff != "" {
				t.Errorf("Data (-want +got):\n%s", diff)
			}
			if got.Cut != tt.cut {
				t.Errorf("Cut = %v, want %v", got.Cut, tt.cut)
			}
			if got.Size != int64(len(tt.in)) {
				t.Errorf("Size = %d, want %d", got.Size, len(tt.in))
			}
			if !json.Valid(got.Data) {
				t.Errorf("Data is not JSON: %s", got.Data)
			}
		})
	}
}

func TestNextStaysInStep(t *testing.T) {
	in := `{"a":"` + strings.Repeat("x", 200<<10) + `"}` + "\n" + `not json` + "\n" +
		`{"b":"` + strings.Repeat("y", 100) + `", bad}` + "\n" + `{"c":3}` + "\n" + `tail`
	r := NewReader(strings.NewReader(in), small)
	var got []string
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var se *SyntaxError
		if errors.As(err, &se) {
			got = append(got, "syntax error")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(rec.Data)+" "+rec.Cut.String())
	}
	want := []string{`{"a":"xxxxxxxx"} strings`, `not json none`, "syntax error", `{"c":3} none`, `tail none`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestLongKeyIsAStructuralCut(t *testing.T) {
	key := strings.Repeat("k", 300)
	got, err := next(t, `{"`+key+`":1}`, Limits{Record: 16, String: 8, Budget: 1024, Depth: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"` + key[:maxKey] + `":1}`; string(got.Data) != want || got.Cut != CutValues {
		t.Errorf("got %s (%v), want %s (values)", got.Data, got.Cut, want)
	}
}

func TestClipped(t *testing.T) {
	rec, err := next(t, `["`+strings.Repeat("a", 20)+`","abc"]`, small)
	if err != nil {
		t.Fatal(err)
	}
	var v []string
	if err := json.Unmarshal(rec.Data, &v); err != nil {
		t.Fatal(err)
	}
	got := []bool{rec.Cut.Clipped(v[0], small), rec.Cut.Clipped(v[1], small)}
	if diff := cmp.Diff([]bool{true, false}, got); diff != "" {
		t.Errorf("Clipped (-want +got):\n%s", diff)
	}
}

// failing is a reader that fails after its data.
type failing struct{ r io.Reader }

var errBroken = errors.New("broken pipe")

func (f failing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errBroken
	}
	return n, err
}

func TestReadErrorIsReturned(t *testing.T) {
	r := NewReader(bufio.NewReader(failing{strings.NewReader(`{"a":"` + strings.Repeat("x", 100))}), small)
	if _, err := r.Next(); !errors.Is(err, errBroken) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

// endless streams one JSON line of n bytes without holding it: a string
// value of x's.
type endless struct {
	n, off int64
}

func (e *endless) Read(p []byte) (int, error) {
	const head = `{"type":"result","result":"`
	k := 0
	for k < len(p) && e.off < e.n {
		switch {
		case e.off < int64(len(head)):
			p[k] = head[e.off]
		case e.off == e.n-3:
			p[k] = '"'
		case e.off == e.n-2:
			p[k] = '}'
		case e.off == e.n-1:
			p[k] = '\n'
		default:
			p[k] = 'x'
		}
		k++
		e.off++
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

func TestHugeLineInBoundedMemory(t *testing.T) {
	lim := Limits{Record: 512 << 10, String: 1 << 20, Budget: 4 << 20, Depth: 64}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec, err := NewReader(&endless{n: 64 << 20}, lim).Next()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Type, Result string }
	if err := json.Unmarshal(rec.Data, &v); err != nil {
		t.Fatal(err)
	}
	if v.Type != "result" || len(v.Result) != lim.String || !rec.Cut.Clipped(v.Result, lim) || rec.Size != 64<<20-1 {
		t.Fatalf("type %q, result %d bytes, cut %v, size %d", v.Type, len(v.Result), rec.Cut, rec.Size)
	}
	// Allocated: the 64 KiB read buffer, the head (up to Record, grown by
	// append) and the reduction; never the 64 MiB line.
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Fatalf("allocated %d bytes reading a 64 MiB line", got)
	}
}
