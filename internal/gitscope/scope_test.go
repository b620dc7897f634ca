package gitscope

import (
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/google/go-cmp/cmp"
)

func TestParseScope(t *testing.T) {
	tests := []struct {
		in   string
		want Scope
	}{
		{"", Scope{Kind: Auto}},
		{"base:", Scope{Kind: Auto}},
		{"uncommitted", Scope{Kind: Uncommitted}},
		{"Working", Scope{Kind: Uncommitted}},
		{"all", Scope{Kind: Uncommitted}},
		{"staged", Scope{Kind: Staged}},
		{"cached", Scope{Kind: Staged}},
		{"INDEX", Scope{Kind: Staged}},
		{"main..feature", Scope{Kind: Range, Ref: "main..feature"}},
		{"range:a...b", Scope{Kind: Range, Ref: "a...b"}},
		{"compare:v1..v2", Scope{Kind: Range, Ref: "v1..v2"}},
		{"abc1234", Scope{Kind: Commit, Ref: "abc1234"}},
		{"0123456789abcdef0123456789abcdef01234567", Scope{Kind: Commit, Ref: "0123456789abcdef0123456789abcdef01234567"}},
		{"commit:v1.2", Scope{Kind: Commit, Ref: "v1.2"}},
		{"HEAD~3", Scope{Kind: Commit, Ref: "HEAD~3"}},
		{"HEAD^", Scope{Kind: Commit, Ref: "HEAD^"}},
		{"HEAD^2~1", Scope{Kind: Commit, Ref: "HEAD^2~1"}},
		{"abc123", Scope{Kind: Branch, Ref: "abc123"}}, // 6 hex: a branch name
		{"main", Scope{Kind: Branch, Ref: "main"}},
		{"branch:release/1.0", Scope{Kind: Branch, Ref: "release/1.0"}},
		{"base:origin/main", Scope{Kind: Branch, Ref: "origin/main"}},
	}
	for _, tt := range tests {
		got, err := ParseScope(tt.in)
		if err != nil {
			t.Errorf("ParseScope(%q) error: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseScope(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseScopeRejectsBadRefs(t *testing.T) {
	for _, in := range []string{
		"--output=/tmp/x", "-p", "range:--all", "commit:-1", "commit:",
		"main; rm -rf /", "a b", "a\tb", "x`id`", "$(id)", "a|b", "a<b", "a>b", "a&b",
		`a"b`, "a'b", "a\x00b", "a\u00a0b", "main..feat ure",
	} {
		_, err := ParseScope(in)
		if !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("ParseScope(%q) = %v, want INVALID_INPUT", in, err)
		}
	}
}
